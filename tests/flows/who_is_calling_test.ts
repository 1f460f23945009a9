/**
 * Bad input to the who-is-calling checks always gets a Berlin Group 4xx, never a 5xx or a hang,
 * and never reaches the upstream: random header values and random protected JWS headers.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { exportJWK, generateKeyPair } from "jose";
import { startGateway } from "../support/gateway.ts";
import { startUpstream } from "../support/upstream.ts";
import { createCa, issue, nginxHeader } from "../support/pki.ts";
import { buildPolicy } from "../support/policies.ts";
import { initiationHeaders } from "../support/requests.ts";
import { PAYMENT_BODY, PAYMENT_TARGET, signHttpSignature, signJws } from "../support/signing.ts";
import { digestOf } from "../../src/signing/digest.ts";

const ca = await createCa();
const tpp = await issue(ca);
const jwksFile = await Deno.makeTempFile({ suffix: ".json" });
globalThis.addEventListener("unload", () => Deno.removeSync(jwksFile));
const { publicKey } = await generateKeyPair("RS256");
await Deno.writeTextFile(
  jwksFile,
  JSON.stringify({ keys: [{ ...await exportJWK(publicKey), kid: "k1" }] }),
);

const POLICY = buildPolicy({
  trust: { anchors: [ca.pem] },
  defaults: {
    tpp_certificate: { form: "nginx" },
    bearer_token: { mode: "enforce", jwks_file: jwksFile },
    digest: {},
    jws_signature: {},
    http_signature: {},
  },
});

const TARGET = PAYMENT_TARGET;
const DIGEST = await digestOf(new TextEncoder().encode(PAYMENT_BODY));
/** Headers that are verified whenever they are sent (a Bearer prefix goes before the token). */
const HEADERS = ["x-ssl-client-cert", "authorization", "digest", "x-jws-signature", "signature"];
/** The check that reads each of them. */
const READER: Record<string, string> = {
  "x-ssl-client-cert": "tpp_certificate",
  authorization: "bearer_token",
  digest: "digest",
  "x-jws-signature": "jws_signature",
  signature: "http_signature",
};
/** Header values a client can send: visible ASCII and spaces, trimmed by fetch anyway. */
const headerValue = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map(String.fromCharCode),
  maxLength: 300,
})
  .filter((v) => v.trim() !== "");

/**
 * A payment initiation that passes every request-hardening rule, with `name` set to the random
 * `value`. Digest and a signature travel together (signature_pairing), so a random Digest comes
 * with a valid JWS over it and a random signature with the body's Digest: the check that reads
 * the random value is the one that decides.
 */
async function randomized(name: string, value: string): Promise<Record<string, string>> {
  const headers = initiationHeaders({ "x-request-id": crypto.randomUUID() });
  if (name === "authorization") return { ...headers, authorization: `Bearer ${value}` };
  if (name === "digest") {
    return await signJws(tpp, {
      method: "POST",
      target: TARGET,
      headers: { ...headers, digest: value },
    });
  }
  if (name === "signature") {
    const signed = await signHttpSignature(tpp, { method: "POST", target: TARGET, headers });
    return { ...signed, digest: DIGEST, signature: value };
  }
  if (name === "x-jws-signature") return { ...headers, digest: DIGEST, [name]: value };
  return { ...headers, [name]: value };
}

Deno.test("who is calling: random certificate, token, Digest and signature headers get a 4xx", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({ policy: POLICY, upstream: upstream.url });
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...HEADERS), headerValue, async (name, value) => {
      const response = await gateway.fetch(TARGET, {
        method: "POST",
        headers: await randomized(name, value),
        body: PAYMENT_BODY,
      });
      const body = await response.json();
      assert.ok(
        response.status === 400 || response.status === 401,
        `${name}: ${value} -> ${response.status}`,
      );
      assert.equal(typeof body.tppMessages[0].code, "string");
      const findings = gateway.log.lines.at(-1)!.findings as { check: string }[];
      assert.deepEqual(findings.map((f) => f.check), [READER[name]], `${name}: ${value}`);
    }),
    { numRuns: 300 },
  );
  assert.equal(upstream.received.length, 0);
});

Deno.test("who is calling: random protected JWS header values get 401, never a 5xx", async () => {
  await using upstream = startUpstream();
  await using gateway = await startGateway({ policy: POLICY, upstream: upstream.url });
  // kid is not listed: with x5c present it is not used.
  const fields = ["alg", "crit", "b64", "sigT", "sigD", "x5c", "x5t#S256"];
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...fields),
      fc.jsonValue({ maxDepth: 2 }),
      async (field, value) => {
        fc.pre(!(field === "b64" && value === false));
        const headers = await signJws(tpp, {
          method: "POST",
          target: TARGET,
          headers: initiationHeaders({ "x-request-id": crypto.randomUUID() }),
          body: PAYMENT_BODY,
        }, { header: { [field]: value } });
        const response = await gateway.fetch(TARGET, {
          method: "POST",
          headers: { ...headers, "x-ssl-client-cert": nginxHeader(tpp) },
          body: PAYMENT_BODY,
        });
        const body = await response.json();
        assert.equal(
          response.status,
          401,
          `${field}: ${JSON.stringify(value)} -> ${JSON.stringify(body)}`,
        );
        const findings = gateway.log.lines.at(-1)!.findings as { check: string }[];
        assert.deepEqual(findings.map((f) => f.check), ["jws_signature"], field);
      },
    ),
    { numRuns: 200 },
  );
  assert.equal(upstream.received.length, 0);
});
