import assert from "node:assert/strict";
import { JwsVerifier, sigTInstant } from "../../../src/signing/jws.ts";
import { TrustStore } from "../../../src/pki/trust.ts";
import { tppKeysSection, trustSection } from "../../../src/pki/sections.ts";
import { GatewayError } from "../../../src/psd2/errors.ts";
import { createCa, issue } from "../../support/pki.ts";
import { type JwsOptions, PAYMENT_BODY, signJws } from "../../support/signing.ts";

const ca = await createCa();
const tpp = await issue(ca);
const other = await issue(ca, { orgId: "PSDGE-NBG-999999" });
const intermediate = await issue(ca, { ca: true, name: "Test Issuing CA 2" });
const viaIntermediate = await issue(intermediate);
const store = new TrustStore(
  trustSection.parse({ anchors: [ca.pem], intermediates: [intermediate.pem] }),
  tppKeysSection.parse([
    { tpp: "PSDGE-NBG-123456", kid: "tpp-key-1", certificate: tpp.pem },
    { tpp: "PSDGE-NBG-123456", kid: "tpp-key-2", certificate: viaIntermediate.pem },
  ]),
);
const verifier = new JwsVerifier(store, {
  algorithms: ["PS256", "RS256", "ES256"],
  sigtSkewSeconds: 300,
  coverage: { always: ["(request-target)", "digest", "x-request-id"], whenPresent: ["psu-id"] },
  group: "pis",
});
const TARGET = "/v1/payments/domestic";
const ID = "99391c7e-ad88-49ec-a2ad-99ddcb1f7721";

/** Signs the test request; returns its headers and the time to verify it at. */
async function signed(options: JwsOptions = {}, signer = tpp) {
  const headers = await signJws(signer, {
    method: "POST",
    target: TARGET,
    headers: { "x-request-id": ID, "content-type": "application/json" },
    body: PAYMENT_BODY,
  }, options);
  return new Headers(headers);
}

function verify(headers: Headers, options: { value?: string; now?: number } = {}) {
  return verifier.verify(options.value ?? headers.get("x-jws-signature")!, {
    method: "POST",
    target: TARGET,
    headers,
    now: options.now ?? Date.now(),
  });
}

/** Asserts 401 SIGNATURE_INVALID at x-jws-signature with exactly this text. */
async function invalid(promise: Promise<unknown>, text: string) {
  await assert.rejects(promise, (error) => {
    assert.ok(error instanceof GatewayError, String(error));
    assert.equal(error.message, text);
    assert.equal(error.status, 401);
    assert.equal(error.code, "SIGNATURE_INVALID");
    assert.equal(error.path, "x-jws-signature");
    return true;
  });
}

function b64url(text: string): string {
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

const NOT_COMPACT =
  'Header "x-jws-signature" must be a compact detached JWS: <protected>..<signature>';

Deno.test("JwsVerifier.verify() accepts a valid signature, also with whitespace around it, without a callback", async () => {
  const headers = await signed();
  const value = headers.get("x-jws-signature")!;
  assert.equal((await verify(headers)).organizationId, "PSDGE-NBG-123456");
  await verify(headers, { value: `  ${value} ` });
});

Deno.test("JwsVerifier.verify() refuses a value that is not exactly <protected>..<signature>", async () => {
  const headers = await signed();
  const value = headers.get("x-jws-signature")!;
  for (const bad of [`!${value}`, `${value}!`, value.replace("..", "."), `${value}.x`]) {
    await invalid(verify(headers, { value: bad }), NOT_COMPACT);
  }
});

Deno.test("JwsVerifier.verify() decodes a base64url protected header with - and _", async () => {
  // "???" and ">>>" encode to "Pz8_" and "Pj4-": both base64url-only characters in the header.
  const headers = await signed({ header: { note: "???>>>" } });
  const [protectedPart] = headers.get("x-jws-signature")!.split("..");
  assert.match(protectedPart, /-/);
  assert.match(protectedPart, /_/);
  await verify(headers);
});

Deno.test("JwsVerifier.verify() refuses a protected header that is no JSON object", async () => {
  const headers = await signed();
  const [, signature] = headers.get("x-jws-signature")!.split("..");
  for (const json of ["null", "[]", '"text"', "1", "{"]) {
    await invalid(
      verify(headers, { value: `${b64url(json)}..${signature}` }),
      "The JWS protected header must be base64url-encoded JSON",
    );
  }
});

Deno.test("JwsVerifier.verify() refuses an alg outside the list, or none at all", async () => {
  await invalid(
    verify(await signed({ header: { alg: "HS256" } })),
    'The JWS "alg" must be one of PS256, RS256, ES256, got "HS256"',
  );
  await invalid(
    verify(await signed({ header: { alg: undefined } })),
    'The JWS "alg" must be one of PS256, RS256, ES256, got null',
  );
});

Deno.test("JwsVerifier.verify() refuses a crit that is no list of names", async () => {
  for (const crit of ["sigT", ["sigT", "sigD", "b64", 1], undefined]) {
    await invalid(
      verify(await signed({ header: { crit } })),
      'The JWS "crit" must list sigT, sigD, b64',
    );
  }
});

Deno.test("JwsVerifier.verify() takes sigT as an RFC 3339 time with seconds or fractions, and nothing else", async () => {
  const now = Date.now();
  const at = (ms: number) => new Date(ms).toISOString();
  await verify(await signed({ sigT: at(now) }), { now });
  await verify(await signed({ sigT: at(now).replace(/Z$/, "456789Z") }), { now });
  // Any offset names the same instant (independent signing libraries write +00:00).
  await verify(await signed({ sigT: at(now).replace("Z", "+00:00") }), { now });
  const text =
    'The JWS "sigT" must be an RFC 3339 time like 2026-01-31T12:00:00Z or 2026-01-31T16:00:00.5+04:00';
  for (
    const sigT of [
      `+00${at(now)}`,
      at(now).replace("Z", "+0000"),
      at(now).slice(0, 10),
      `${at(now)} `,
      at(now).replace(/\.\d+Z$/, ".Z"),
      at(now).replace(/\.\d+Z$/, ".1234567890Z"),
      "2026-13-01T12:00:00Z",
      1700000000,
      // A list whose text is a valid time: still no string.
      [at(now).replace(/\.\d+Z$/, "Z")],
    ]
  ) {
    await invalid(verify(await signed({ sigT: sigT as string }), { now }), text);
  }
});

Deno.test("JwsVerifier.verify() allows sigT exactly at the skew, not a second more, both ways", async () => {
  const sigT = new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
  const headers = await signed({ sigT });
  const t = Date.parse(sigT);
  await verify(headers, { now: t + 300_000 });
  await verify(headers, { now: t - 300_000 });
  for (const now of [t + 301_000, t - 301_000]) {
    await invalid(
      verify(headers, { now }),
      `The JWS "sigT" ${sigT} is more than 300 s away from the bank's clock`,
    );
  }
});

Deno.test("JwsVerifier.verify() refuses a sigD that is not the HTTP headers mechanism", async () => {
  const text = 'The JWS "sigD" must have mId "http://uri.etsi.org/19182/HttpHeaders"';
  for (
    const sigD of [
      undefined,
      null,
      "http://uri.etsi.org/19182/HttpHeaders",
      { pars: ["(request-target)", "digest", "x-request-id"] },
      { mId: "http://uri.etsi.org/19182/ObjectIdByURI", pars: ["digest"] },
    ]
  ) {
    await invalid(verify(await signed({ header: { sigD } })), text);
  }
});

Deno.test("JwsVerifier.verify() refuses pars that are no list of header names", async () => {
  const mId = "http://uri.etsi.org/19182/HttpHeaders";
  const text = 'The JWS "sigD.pars" must be a list of header names';
  const good = ["(request-target)", "digest", "x-request-id"];
  for (const pars of ["digest", [], [...good, 1], [...good, ""], undefined]) {
    await invalid(verify(await signed({ header: { sigD: { mId, pars } } })), text);
  }
});

Deno.test("JwsVerifier.verify() takes x5c of one to four certificates, the signer's first", async () => {
  await verify(await signed({ chain: [ca, ca, ca] }));
  const text = 'The JWS "x5c" must be a list of 1 to 4 base64 certificates, the signer\'s first';
  for (
    const x5c of [tpp.base64, [], [tpp.base64, ca.base64, ca.base64, ca.base64, ca.base64], [
      tpp.base64,
      1,
    ]]
  ) {
    await invalid(verify(await signed({ header: { x5c } })), text);
  }
});

Deno.test("JwsVerifier.verify() checks x5t#S256 against the x5c signer", async () => {
  const thumbprint = async (cert: typeof tpp) =>
    b64url(
      String.fromCharCode(
        ...new Uint8Array(await crypto.subtle.digest("SHA-256", cert.cert.rawData)),
      ),
    );
  await verify(await signed({ header: { "x5t#S256": await thumbprint(tpp) } }));
  await invalid(
    verify(await signed({ header: { "x5t#S256": await thumbprint(other) } })),
    'The JWS "x5t#S256" does not match the first certificate of "x5c"',
  );
});

Deno.test("JwsVerifier.verify() finds the key by kid or x5t#S256, the chain through configured intermediates", async () => {
  await verify(await signed({ keyRef: "kid", kid: "tpp-key-1" }));
  await verify(await signed({ keyRef: "x5t#S256" }));
  await verify(await signed({ keyRef: "kid", kid: "tpp-key-2" }, viaIntermediate));
  await verify(await signed({ keyRef: "x5t#S256" }, viaIntermediate));
  await invalid(
    verify(await signed({ keyRef: "kid", kid: "unknown" })),
    'The JWS "kid" "unknown" names no key the bank knows',
  );
  await invalid(
    verify(await signed({ keyRef: "x5t#S256" }, other)),
    'The JWS "x5t#S256" names no signing certificate the bank knows',
  );
  await invalid(
    verify(await signed({ header: { x5c: undefined } })),
    'The JWS header must carry "x5c", "x5t#S256" or "kid"',
  );
  await invalid(
    verify(await signed({ header: { x5c: undefined, kid: 7 } })),
    'The JWS header must carry "x5c", "x5t#S256" or "kid"',
  );
});

Deno.test("JwsVerifier.verify() refuses an alg the signer's key cannot do", async () => {
  await invalid(
    verify(await signed({ header: { alg: "ES256" } })),
    'The signing certificate\'s key does not fit the JWS "alg" ES256',
  );
});

Deno.test("JwsVerifier.verify() names the covered headers when the value does not verify", async () => {
  const headers = await signed();
  headers.set("x-request-id", "0e8a3f7c-0000-4000-8000-000000000000");
  await invalid(
    verify(headers),
    "The JWS signature value does not verify over (request-target), digest, x-request-id with the signing certificate",
  );
});

Deno.test("JwsVerifier.verify() takes lines signed with the pars names as written, (request-target) in lower case", async () => {
  // Every name written otherwise than in lower case, (request-target) included: the second form
  // keeps (request-target) as the pseudo-header, not as a header named "(Request-Target)".
  const pars = ["(Request-Target)", "Digest", "X-Request-ID"];
  for (const linesAsWritten of [false, true]) {
    const signer = await verify(await signed({ pars, linesAsWritten }));
    assert.equal(signer.organizationId, "PSDGE-NBG-123456");
  }
  const headers = await signed({ pars, linesAsWritten: true });
  headers.set("x-request-id", "0e8a3f7c-0000-4000-8000-000000000000");
  await invalid(
    verify(headers),
    "The JWS signature value does not verify over (request-target), digest, x-request-id with the signing certificate",
  );
});

Deno.test("sigTInstant() reads RFC 3339 times to the millisecond, with any offset", () => {
  const noon = Date.UTC(2026, 0, 31, 12, 0, 0);
  for (
    const [sigT, instant] of [
      ["2026-01-31T12:00:00Z", noon],
      ["2026-01-31t12:00:00z", noon],
      ["2026-01-31T12:00:00.5Z", noon + 500],
      ["2026-01-31T12:00:00.123456789Z", noon + 123.456789],
      ["2026-01-31T16:00:00+04:00", noon],
      ["2026-01-31T16:30:00+04:30", noon],
      ["2026-01-31T07:45:00-04:15", noon],
      ["2026-01-31T12:00:00-00:00", noon],
      ["2024-02-29T23:59:59Z", Date.UTC(2024, 1, 29, 23, 59, 59)],
      ["0100-01-01T00:00:00Z", -59011459200000],
      [
        "2026-12-31T23:59:59.999+23:59",
        Date.UTC(2026, 11, 31, 23, 59, 59, 999) - (23 * 60 + 59) * 60_000,
      ],
    ] as const
  ) {
    assert.equal(sigTInstant(sigT), instant, sigT);
  }
});

Deno.test("sigTInstant() refuses what names no real instant", () => {
  for (
    const sigT of [
      "2026-02-29T12:00:00Z",
      "2026-04-31T12:00:00Z",
      "2026-13-01T12:00:00Z",
      "2026-00-10T12:00:00Z",
      "2026-01-00T12:00:00Z",
      "2026-01-31T24:00:00Z",
      "2026-01-31T12:60:00Z",
      "2026-01-31T12:00:60Z",
      "2026-01-31T12:00:00+24:00",
      "2026-01-31T12:00:00+04:60",
      "0000-01-01T00:00:00Z",
      // Years 1 to 99, which Date.UTC would read as 1901 to 1999: refused, never misread.
      "0050-06-15T12:00:00Z",
      "0099-12-31T23:59:59Z",
      "2026-01-31 12:00:00Z",
      "2026-01-31T12:00:00",
      "2026-01-31T12:00Z",
      "x2026-01-31T12:00:00Z",
      "2026-01-31T12:00:00Zx",
    ]
  ) {
    assert.equal(sigTInstant(sigT), undefined, sigT);
  }
});

Deno.test("JwsVerifier.verify() checks PS256/384/512, RS256/384/512 and ES256, and refuses each altered", async () => {
  const ec = await issue(ca, { keyType: "EC" });
  const every = new JwsVerifier(store, {
    algorithms: ["PS256", "PS384", "PS512", "RS256", "RS384", "RS512", "ES256"],
    sigtSkewSeconds: 300,
    coverage: { always: ["(request-target)", "digest", "x-request-id"], whenPresent: [] },
    group: "pis",
  });
  const check = (headers: Headers, value = headers.get("x-jws-signature")!) =>
    every.verify(value, { method: "POST", target: TARGET, headers, now: Date.now() });
  for (
    const [alg, signer] of [
      ...["PS256", "PS384", "PS512", "RS256", "RS384", "RS512"].map((a) => [a, tpp] as const),
      ["ES256", ec] as const,
    ]
  ) {
    const headers = await signed({ alg }, signer);
    assert.equal((await check(headers)).organizationId, "PSDGE-NBG-123456", alg);
    // One character of the signature changed, and the signed X-Request-ID changed.
    const value = headers.get("x-jws-signature")!;
    const flipped = value.slice(0, -2) + (value.at(-2) === "A" ? "B" : "A") + value.at(-1);
    await assert.rejects(check(headers, flipped), GatewayError, alg);
    const other = new Headers(headers);
    other.set("x-request-id", crypto.randomUUID());
    await assert.rejects(check(other), GatewayError, alg);
  }
});
