import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { verifyValue } from "../../../src/signing/value.ts";

const data = new TextEncoder().encode(
  "digest: SHA-256=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
);
const integer = (bytes: Uint8Array) => BigInt("0x" + Buffer.from(bytes).toString("hex"));

async function rsa(name: "RSASSA-PKCS1-v1_5" | "RSA-PSS", hash: string) {
  const pair = await crypto.subtle.generateKey(
    { name, modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash },
    true,
    ["sign", "verify"],
  );
  const spki = await crypto.subtle.exportKey("spki", pair.publicKey);
  const sealed = await crypto.subtle.importKey("spki", spki, { name, hash }, false, ["verify"]);
  return { ...pair, sealed };
}

Deno.test("verifyValue() checks each JWS algorithm with a key imported for it", async () => {
  for (
    const [alg, name, hash, params] of [
      ["RS256", "RSASSA-PKCS1-v1_5", "SHA-256", "RSASSA-PKCS1-v1_5"],
      ["RS512", "RSASSA-PKCS1-v1_5", "SHA-512", "RSASSA-PKCS1-v1_5"],
      ["PS256", "RSA-PSS", "SHA-256", { name: "RSA-PSS", saltLength: 32 }],
      ["PS512", "RSA-PSS", "SHA-512", { name: "RSA-PSS", saltLength: 64 }],
    ] as const
  ) {
    const keys = await rsa(name, hash);
    const signature = new Uint8Array(await crypto.subtle.sign(params, keys.privateKey, data));
    assert.equal(await verifyValue(alg, keys.publicKey, signature, data), true, alg);
    assert.equal(await verifyValue(alg, keys.sealed, signature, data), true, `${alg} sealed`);
    const other = data.slice(1);
    assert.equal(await verifyValue(alg, keys.publicKey, signature, other), false, alg);
    assert.equal(await verifyValue(alg, keys.sealed, signature, other), false, `${alg} sealed`);
  }
});

Deno.test("verifyValue() refuses a key imported for another algorithm, as WebCrypto does", async () => {
  const pkcs1 = await rsa("RSASSA-PKCS1-v1_5", "SHA-256");
  const signature = new Uint8Array(
    await crypto.subtle.sign("RSASSA-PKCS1-v1_5", pkcs1.privateKey, data),
  );
  assert.equal(await verifyValue("RS256", pkcs1.publicKey, signature, data), true);
  assert.equal(await verifyValue("RS512", pkcs1.publicKey, signature, data), false);
  assert.equal(await verifyValue("PS256", pkcs1.publicKey, signature, data), false);
  assert.equal(await verifyValue("HS256", pkcs1.publicKey, signature, data), false);
  assert.equal(await verifyValue("none", pkcs1.publicKey, signature, data), false);
});

Deno.test("verifyValue() leaves ECDSA to WebCrypto", async () => {
  const keys = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
    "sign",
    "verify",
  ]);
  const signature = new Uint8Array(
    await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, keys.privateKey, data),
  );
  assert.equal(await verifyValue("ES256", keys.publicKey, signature, data), true);
  assert.equal(await verifyValue("ES256", keys.publicKey, signature, data.slice(1)), false);
  assert.equal(await verifyValue("ES256", keys.publicKey, signature.slice(1), data), false);
  assert.equal(await verifyValue("RS256", keys.publicKey, signature, data), false);
});

Deno.test("verifyValue() checks an extractable RSA key's values itself: s + n is refused", async () => {
  // WebCrypto here takes a PSS value at or above the modulus (RFC 8017 has it invalid); the
  // gateway's own verification, used for every extractable RSA key, never does.
  const keys = await rsa("RSA-PSS", "SHA-256");
  const { n } = await crypto.subtle.exportKey("jwk", keys.publicKey);
  const modulus = integer(Buffer.from(n!, "base64url"));
  for (let tries = 0; tries < 200; tries++) {
    const signature = new Uint8Array(
      await crypto.subtle.sign({ name: "RSA-PSS", saltLength: 32 }, keys.privateKey, data),
    );
    const plus = integer(signature) + modulus;
    if (plus >= 1n << 2048n) continue;
    const altered = new Uint8Array(Buffer.from(plus.toString(16).padStart(512, "0"), "hex"));
    assert.equal(await verifyValue("PS256", keys.publicKey, signature, data), true);
    assert.equal(await verifyValue("PS256", keys.publicKey, altered, data), false);
    return;
  }
  assert.fail("no signature of 200 left room for s + n below 2^2048");
});
