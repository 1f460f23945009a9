import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  checkDigest,
  digestOf,
  MAX_DIGEST_LENGTH,
  sha256Base64,
} from "../../../src/signing/digest.ts";
import { GatewayError } from "../../../src/psd2/errors.ts";

const encoder = new TextEncoder();
const BODY = encoder.encode('{"amount":"12.50"}');

/** The Digest value computed independently of the module (node:crypto). */
function digest(algorithm: "sha256" | "sha512", body: Uint8Array): string {
  return `SHA-${algorithm.slice(3)}=${createHash(algorithm).update(body).digest("base64")}`;
}

/** Asserts that checkDigest refuses with 400 FORMAT_ERROR at Digest and this text. */
async function refused(value: string, text: string, allowed?: ("SHA-256" | "SHA-512")[]) {
  await assert.rejects(checkDigest(value, BODY, allowed), (error) => {
    assert.ok(error instanceof GatewayError);
    assert.equal(error.status, 400);
    assert.equal(error.code, "FORMAT_ERROR");
    assert.equal(error.path, "Digest");
    assert.equal(error.message, text);
    return true;
  });
}

Deno.test("digestOf() is the base64 SHA-256 or SHA-512 of the bytes, of nothing for an empty body", async () => {
  assert.equal(
    await digestOf(new Uint8Array()),
    "SHA-256=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
  );
  assert.equal(await digestOf(BODY), digest("sha256", BODY));
  assert.equal(await digestOf(BODY, "SHA-512"), digest("sha512", BODY));
});

Deno.test("digestOf() and checkDigest() handle bodies larger than one base64 chunk", async () => {
  const large = Uint8Array.from({ length: 70_000 }, (_, i) => (i * 31 + (i >> 8)) & 0xff);
  assert.equal(await digestOf(large, "SHA-512"), digest("sha512", large));
  await checkDigest(digest("sha256", large), large);
});

Deno.test("checkDigest() accepts a matching value in any case of the name, and every entry of a list", async () => {
  await checkDigest(digest("sha256", BODY), BODY);
  await checkDigest(digest("sha256", BODY).replace("SHA-256", "sha-256"), BODY);
  await checkDigest(` ${digest("sha512", BODY)} ,${digest("sha256", BODY)} `, BODY);
  await checkDigest(digest("sha512", BODY), BODY, ["SHA-512"]);
});

Deno.test("checkDigest() refuses a value that does not match the body, naming the algorithm", async () => {
  const other = encoder.encode('{"amount":"13.50"}');
  await refused(
    digest("sha256", other),
    'Header "Digest" does not match the request body (SHA-256)',
  );
  await refused(
    `${digest("sha256", BODY)}, ${digest("sha512", other)}`,
    'Header "Digest" does not match the request body (SHA-512)',
  );
});

Deno.test("checkDigest() refuses values that do not look like <algorithm>=<base64>", async () => {
  const malformed = 'Header "Digest" must look like SHA-256=<base64>';
  const value = digest("sha256", BODY);
  for (
    const bad of [
      "SHA-256",
      "=" + value.slice(8),
      "SHA-256=",
      "SHA-256=not base64!",
      `${value}==`,
      value.replace("=", "=-"),
      `${value}, `,
    ]
  ) {
    await refused(bad, malformed);
  }
});

Deno.test("checkDigest() refuses an algorithm it does not compute or the policy does not allow", async () => {
  await refused(
    "MD5=HUXZLQLMuI/KZ5KDcJPcOA==",
    'Header "Digest" uses the unsupported algorithm "MD5"; supported: SHA-256, SHA-512',
  );
  await refused(
    digest("sha256", BODY),
    'Header "Digest" uses the unsupported algorithm "SHA-256"; supported: SHA-512',
    ["SHA-512"],
  );
});

/** Counts the hashes (node:crypto's `digest`, as src/signing/digest.ts hashes) made while `run` runs. */
async function countHashing(run: () => Promise<void>): Promise<number> {
  const prototype = Object.getPrototypeOf(createHash("sha256"));
  const original = prototype.digest;
  let calls = 0;
  prototype.digest = function (this: unknown, ...args: unknown[]) {
    calls++;
    return original.apply(this, args);
  };
  try {
    await run();
  } finally {
    prototype.digest = original;
  }
  return calls;
}

Deno.test("checkDigest() hashes a body once per algorithm, however often it is checked", async () => {
  const body = new TextEncoder().encode('{"amount":"1.00"}');
  const both = `${await digestOf(body.slice())}, ${await digestOf(body.slice(), "SHA-512")}`;
  const calls = await countHashing(async () => {
    await checkDigest(both, body);
    await checkDigest(both, body);
    await checkDigest(both.split(", ")[0], body);
  });
  assert.equal(calls, 2);
});

Deno.test("checkDigest() refuses a repeated algorithm and an overlong value without hashing", async () => {
  const body = new TextEncoder().encode("{}");
  const value = await digestOf(body.slice());
  for (
    const [given, text] of [
      [`${value},${value.replace("SHA-256", "sha-256")}`, /"SHA-256" at most once/],
      [Array(300).fill(value).join(","), new RegExp(`at most ${MAX_DIGEST_LENGTH} characters`)],
    ] as const
  ) {
    const calls = await countHashing(async () => {
      await assert.rejects(
        checkDigest(given, body),
        (e) => e instanceof GatewayError && e.code === "FORMAT_ERROR" && text.test(e.message),
      );
    });
    assert.equal(calls, 0);
  }
});

Deno.test("checkDigest() accepts a SHA-256 and a SHA-512 value together", async () => {
  const body = new TextEncoder().encode("payment");
  const value = `${await digestOf(body)},${await digestOf(body, "SHA-512")}`;
  assert.ok(value.length < MAX_DIGEST_LENGTH);
  await checkDigest(value, body);
});

Deno.test("checkDigest() reads a value of up to 256 characters, and says why a longer one is refused", async () => {
  const value = digest("sha256", BODY);
  // Spaces after the entry count, and are trimmed from it.
  await checkDigest(value.padEnd(MAX_DIGEST_LENGTH, " "), BODY);
  await refused(
    value.padEnd(MAX_DIGEST_LENGTH + 1, " "),
    `Header "Digest" must be at most ${MAX_DIGEST_LENGTH} characters, got ${MAX_DIGEST_LENGTH + 1}`,
  );
  await refused(
    `${value},${value.replace("SHA-256", "sha-256")}`,
    'Header "Digest" must give "SHA-256" at most once',
  );
});

Deno.test("sha256Base64() hashes its parts as one byte string, strings as UTF-8", () => {
  const expected = createHash("sha256").update(encoder.encode("POST /v1/ünïcode\n")).update(BODY)
    .digest("base64");
  assert.equal(sha256Base64("POST /v1/ünïcode\n", BODY), expected);
  assert.equal(sha256Base64(), "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
});
