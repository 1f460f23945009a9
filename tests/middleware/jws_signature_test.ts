/**
 * `jws_signature`'s own rules (alg, crit, b64, sigT, sigD, the key reference); what it does alike
 * with `http_signature` is in _signature_test.ts.
 */
import assert from "node:assert/strict";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { startUpstream } from "../support/upstream.ts";
import { issue } from "../support/pki.ts";
import { buildPolicy } from "../support/policies.ts";
import { paymentInput as input, signatureRig, signers } from "../support/signature_rig.ts";
import { type JwsOptions, rfc3339, signJws } from "../support/signing.ts";

const certificates = await signers();
const { ca, tpp, tppEc, otherTpp } = certificates;
const intermediate = await issue(ca, { ca: true, name: "Test Issuing CA 2" });
const viaIntermediate = await issue(intermediate);
const { policy, run, rejected, forPayments } = signatureRig("jws_signature", certificates, {
  tpp_keys: [{ tpp: "PSDGE-NBG-123456", kid: "tpp-key-1", certificate: tpp.pem }],
});

async function signed(options: JwsOptions = {}, signer = tpp, headers = {}) {
  return await signJws(signer, input(headers), options);
}

Deno.test("jwsSignature() accepts RS256 and ES256 signatures", async () => {
  assert.equal((await run(await signed({ alg: "RS256" }))).response.status, 201);
  assert.equal((await run(await signed({}, tppEc))).response.status, 201);
});

Deno.test("jwsSignature() resolves kid and x5t#S256 against the policy's TPP keys", async () => {
  assert.equal((await run(await signed({ keyRef: "kid" }))).response.status, 201);
  assert.equal((await run(await signed({ keyRef: "x5t#S256" }))).response.status, 201);
  await rejected(await signed({ keyRef: "kid", kid: "nobody" }), {
    code: "SIGNATURE_INVALID",
    text: /"kid" "nobody" names no key/,
  });
  await rejected(await signed({ keyRef: "x5t#S256" }, otherTpp), {
    code: "SIGNATURE_INVALID",
    text: /"x5t#S256" names no signing certificate/,
  });
});

Deno.test("jwsSignature() builds the chain through an intermediate sent in x5c", async () => {
  const ok = await run(await signed({ chain: [intermediate] }, viaIntermediate));
  assert.equal(ok.response.status, 201);
  await rejected(await signed({}, viaIntermediate), {
    code: "CERTIFICATE_INVALID",
    text: /does not chain to a trust anchor/,
  });
});

Deno.test("jwsSignature() rejects alg none", async () => {
  await rejected(await signed({ alg: "none" }), {
    code: "SIGNATURE_INVALID",
    text: /"alg" must be one of PS256, RS256, ES256, got "none"/,
  });
});

Deno.test("jwsSignature() rejects HMAC with the certificate's public key as secret", async () => {
  const spki = new Uint8Array(tpp.cert.publicKey.rawData);
  await rejected(await signed({ alg: "HS256", hmacKey: spki }), {
    code: "SIGNATURE_INVALID",
    text: /"alg" .* got "HS256"/,
  });
});

Deno.test("jwsSignature() rejects an unknown crit entry and a crit that leaves out sigT", async () => {
  await rejected(await signed({ header: { crit: ["sigT", "sigD", "b64", "exp"], exp: 1 } }), {
    code: "SIGNATURE_INVALID",
    text: /"crit" names "exp", which is not understood/,
  });
  await rejected(await signed({ header: { crit: ["sigD", "b64"] } }), {
    code: "SIGNATURE_INVALID",
    text: /"crit" must list "sigT"/,
  });
});

Deno.test("jwsSignature() rejects b64 other than false", async () => {
  await rejected(await signed({ header: { b64: true } }), {
    code: "SIGNATURE_INVALID",
    text: /"b64" must be false/,
  });
});

Deno.test("jwsSignature() rejects a header listed in pars but missing from the request", async () => {
  const headers = await signed({
    pars: [
      "(request-target)",
      "digest",
      "x-request-id",
      "psu-id",
      "tpp-redirect-uri",
      "psu-corporate-id",
    ],
  });
  await rejected(headers, {
    code: "SIGNATURE_INVALID",
    text: /covers "psu-corporate-id" but the request has no such header/,
  });
});

Deno.test("jwsSignature() requires pars to cover x-request-id, and PSU and redirect headers sent", async () => {
  await rejected(
    await signed({ pars: ["(request-target)", "digest", "psu-id", "tpp-redirect-uri"] }),
    {
      code: "SIGNATURE_INVALID",
      text: /must cover "x-request-id"/,
    },
  );
  await rejected(
    await signed({ pars: ["(request-target)", "digest", "x-request-id", "tpp-redirect-uri"] }),
    {
      code: "SIGNATURE_INVALID",
      text: /must cover "psu-id", which the request carries/,
    },
  );
});

Deno.test("jwsSignature() rejects a request sent to another path than the one signed", async () => {
  await rejected(await signed(), {
    code: "SIGNATURE_INVALID",
    text: /signature value does not verify/,
  }, { target: "/v1/payments/foreign" });
});

Deno.test("jwsSignature() rejects a stale sigT and a malformed one", async () => {
  const stale = new Date(Date.now() - 3_600_000).toISOString().replace(/\.\d{3}Z$/, "Z");
  await rejected(await signed({ sigT: stale }), {
    code: "SIGNATURE_INVALID",
    text: /"sigT" .* is more than 300 s away/,
  });
  await rejected(await signed({ sigT: "yesterday" }), {
    code: "SIGNATURE_INVALID",
    text: /"sigT" must be an RFC 3339 time/,
  });
});

Deno.test("jwsSignature() rejects a sigT in the future beyond the skew", async () => {
  // A signature dated ahead could be held back and replayed for longer than the window.
  const ahead = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d{3}Z$/, "Z");
  await rejected(await signed({ sigT: ahead }), {
    code: "SIGNATURE_INVALID",
    text: /"sigT" .* is more than 300 s away/,
    path: "x-jws-signature",
  });
  const near = new Date(Date.now() + 60_000).toISOString().replace(/\.\d{3}Z$/, "Z");
  const { response } = await run(await signed({ sigT: near }));
  assert.equal(response.status, 201, "a minute ahead is within the skew");
});

Deno.test("jwsSignature() accepts sigT at any RFC 3339 offset and with fractional seconds", async () => {
  // jwcrypto and other JOSE libraries write the local time with its offset.
  for (const [offset, digits] of [[0, 0], [240, 3], [-330, 6], [0, 9], [60, 1]]) {
    const sigT = rfc3339(Date.now(), offset, digits);
    const { response, body } = await run(await signed({ sigT }));
    assert.equal(response.status, 201, `${sigT}: ${JSON.stringify(body)}`);
  }
  const fraction = new Date().toISOString();
  assert.equal((await run(await signed({ sigT: fraction }))).response.status, 201, fraction);
});

Deno.test("jwsSignature() holds a sigT with an offset to the skew by the instant it names", async () => {
  const hour = 3_600_000;
  for (const sigT of [rfc3339(Date.now() - hour, 240, 3), rfc3339(Date.now() + hour, -330)]) {
    await rejected(await signed({ sigT }), {
      code: "SIGNATURE_INVALID",
      text: /"sigT" .* is more than 300 s away/,
    });
  }
  // The bank's wall-clock digits labelled +04:00 name an instant four hours earlier.
  const relabelled = new Date().toISOString().replace(/\.\d{3}Z$/, "+04:00");
  await rejected(await signed({ sigT: relabelled }), {
    code: "SIGNATURE_INVALID",
    text: /"sigT" .* is more than 300 s away/,
  });
  const day = new Date().toISOString().slice(0, 10);
  for (
    const sigT of [
      "2026-02-30T12:00:00Z",
      `${day}T24:00:00Z`,
      `${day}T12:00:00+24:00`,
      `${day}T12:00:00+0400`,
      `${day} 12:00:00Z`,
      `${day}T12:00:00`,
      `${day}T12:00:00.Z`,
    ]
  ) {
    await rejected(await signed({ sigT }), {
      code: "SIGNATURE_INVALID",
      text: /"sigT" must be an RFC 3339 time/,
    });
  }
});

const MIXED_CASE = ["(request-target)", "Digest", "X-Request-ID", "PSU-ID", "TPP-Redirect-URI"];

Deno.test("jwsSignature() compares sigD.pars names case-insensitively", async () => {
  // Lines signed with lower-case names (the reference's form) or with the names as written.
  for (const linesAsWritten of [false, true]) {
    const { response, body } = await run(await signed({ pars: MIXED_CASE, linesAsWritten }));
    assert.equal(response.status, 201, JSON.stringify(body));
  }
  const headers = await signed({ pars: MIXED_CASE, linesAsWritten: true });
  await rejected({ ...headers, "psu-id": "PSU-6666" }, {
    code: "SIGNATURE_INVALID",
    text: /signature value does not verify/,
  });
});

Deno.test("jwsSignature() applies the coverage rules to pars names in any case", async () => {
  await rejected(await signed({ pars: [...MIXED_CASE, "digest"] }), {
    code: "SIGNATURE_INVALID",
    text: /lists "digest" twice/,
  });
  await rejected(await signed({ pars: MIXED_CASE.filter((p) => p !== "PSU-ID") }), {
    code: "SIGNATURE_INVALID",
    text: /must cover "psu-id", which the request carries/,
  });
  await rejected(await signed({ pars: [...MIXED_CASE, "PSU-Corporate-ID"] }), {
    code: "SIGNATURE_INVALID",
    text: /covers "psu-corporate-id" but the request has no such header/,
  });
});

Deno.test("jwsSignature() accepts the sigD mId with a trailing slash, and no other mechanism", async () => {
  const mId = "http://uri.etsi.org/19182/HttpHeaders/";
  const { response, body } = await run(await signed({ mId }));
  assert.equal(response.status, 201, JSON.stringify(body));
  for (const other of [`${mId}/`, "http://uri.etsi.org/19182/ObjectIdByURI", mId.toUpperCase()]) {
    await rejected(await signed({ mId: other }), {
      code: "SIGNATURE_INVALID",
      text: /"sigD" must have mId/,
    });
  }
});

Deno.test("jwsSignature() leaves the TPP a bearer token named as it is", async () => {
  // Without a transport certificate the signer names the TPP only when nothing before it did.
  const keys = await generateKeyPair("RS256");
  await using jwks = startUpstream(async () =>
    Response.json({ keys: [{ ...await exportJWK(keys.publicKey), kid: "k1", alg: "RS256" }] })
  );
  const issuer = "https://auth.bank.example";
  const text = policy({
    defaults: {
      bearer_token: {
        mode: "enforce",
        jwks_url: `${jwks.url}/jwks.json`,
        issuer,
        audience: ["xs2a"],
      },
      tpp_certificate: undefined,
    },
  });
  const token = await new SignJWT({ iss: issuer, aud: "xs2a", client_id: "client-42" })
    .setProtectedHeader({ alg: "RS256", kid: "k1" })
    .setIssuedAt()
    .setExpirationTime("5m")
    .sign(keys.privateKey);
  const { response, body, log } = await run({
    ...await signed(),
    authorization: `Bearer ${token}`,
  }, { policy: text });
  assert.equal(response.status, 201, JSON.stringify(body));
  assert.equal(log.find((l) => l.op === "initiatePayment")?.tpp, "client-42");
  const alone = await run(await signed(), {
    policy: buildPolicy(text, { defaults: { bearer_token: undefined } }),
  });
  assert.equal(alone.log.find((l) => l.op === "initiatePayment")?.tpp, "PSDGE-NBG-123456");
});

Deno.test("jwsSignature() rejects a value that is not a compact detached JWS", async () => {
  const headers = await signed();
  const [head, , sig] = headers["x-jws-signature"].split(".");
  await rejected({ ...headers, "x-jws-signature": `${head}.eyJ4IjoxfQ.${sig}` }, {
    code: "SIGNATURE_INVALID",
    text: /must be a compact detached JWS/,
  });
  await rejected({ ...headers, "x-jws-signature": `bm90IGpzb24..${sig}` }, {
    code: "SIGNATURE_INVALID",
    text: /protected header must be base64url-encoded JSON/,
  });
});

Deno.test("jwsSignature() accepts pars without (request-target) by default, and refuses them where the policy covers it", async () => {
  const pars = ["digest", "x-request-id", "psu-id", "tpp-redirect-uri"];
  const headers = await signed({ pars });
  assert.equal((await run(headers)).response.status, 201);
  await rejected(headers, {
    code: "SIGNATURE_INVALID",
    text: /^The JWS "sigD.pars" must cover "\(request-target\)"$/,
  }, { policy: forPayments({ cover: ["(request-target)", "digest", "x-request-id"] }) });
});

Deno.test("jwsSignature() rejects pars entries that are no header names, and x5c that is no certificate", async () => {
  await rejected(
    await signed({ pars: ["(request-target)", "digest", "x-request-id", "psu-id:"] }),
    {
      code: "SIGNATURE_INVALID",
      text: /lists "psu-id:", which is no header name/,
    },
  );
  await rejected(await signed({ header: { x5c: ["MIIBAAAA"] } }), {
    code: "CERTIFICATE_INVALID",
    text: /signing certificate cannot be read/,
  });
  await rejected(await signed({ header: { x5c: Array(5).fill(tpp.base64) } }), {
    code: "SIGNATURE_INVALID",
    text: /"x5c" must be a list of 1 to 4 base64 certificates/,
  });
});
