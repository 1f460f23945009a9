/**
 * `http_signature`'s own rules (the keyId, the headers list, the time, the algorithm); what it
 * does alike with `jws_signature` is in _signature_test.ts.
 */
import assert from "node:assert/strict";
import { issue } from "../support/pki.ts";
import { paymentInput as input, signatureRig, signers } from "../support/signature_rig.ts";
import { type HttpSignatureOptions, keyIdOf, signHttpSignature } from "../support/signing.ts";

const certificates = await signers();
const { ca, tpp, rogue, tppEc } = certificates;
/** Serial 0x9FA1 = 40865, as in the Berlin Group guidelines' keyId example. */
const example = await issue(ca, { serial: "9fa1" });
const { run, rejected, forPayments } = signatureRig("http_signature", certificates);

const signed = (options: HttpSignatureOptions = {}, signer = tpp) =>
  signHttpSignature(signer, input(), options);

Deno.test("httpSignature() accepts (created) instead of date, and a reordered issuer DN", async () => {
  const names = [
    "(request-target)",
    "(created)",
    "digest",
    "x-request-id",
    "psu-id",
    "tpp-redirect-uri",
  ];
  assert.equal((await run(await signed({ headers: names }))).response.status, 201);
  const expires = Math.floor(Date.now() / 1000) + 60;
  assert.equal((await run(await signed({ headers: names, expires }))).response.status, 201);
  const reversed = tpp.cert.issuer.split(", ").reverse().join(",");
  const keyId = `SN=${tpp.cert.serialNumber},CA=${reversed}`;
  assert.equal((await run(await signed({ keyId }))).response.status, 201);
});

Deno.test("httpSignature() answers CERTIFICATE_MISSING without TPP-Signature-Certificate", async () => {
  const { "tpp-signature-certificate": _, ...headers } = await signed();
  await rejected(headers, { code: "CERTIFICATE_MISSING", path: "TPP-Signature-Certificate" });
});

const BASE = ["(request-target)", "date", "digest"];

Deno.test("httpSignature() requires digest, x-request-id and the PSU and redirect headers sent; (request-target) where the policy covers it", async () => {
  await rejected(await signed({ headers: [...BASE, "psu-id", "tpp-redirect-uri"] }), {
    code: "SIGNATURE_INVALID",
    text: /must cover "x-request-id"/,
  });
  await rejected(await signed({ headers: [...BASE, "x-request-id", "psu-id"] }), {
    code: "SIGNATURE_INVALID",
    text: /must cover "tpp-redirect-uri", which the request carries/,
  });
  await rejected(
    await signed({
      headers: ["(request-target)", "date", "x-request-id", "psu-id", "tpp-redirect-uri"],
    }),
    { code: "SIGNATURE_INVALID", text: /must cover "digest"/ },
  );
  await rejected(
    await signed({
      headers: [...BASE, "x-request-id", "psu-id", "tpp-redirect-uri", "psu-corporate-id"],
    }),
    {
      code: "SIGNATURE_INVALID",
      text: /covers "psu-corporate-id" but the request has no such header/,
    },
  );
  const untargeted = await signed({
    headers: ["date", "digest", "x-request-id", "psu-id", "tpp-redirect-uri"],
  });
  assert.equal((await run(untargeted)).response.status, 201);
  await rejected(
    untargeted,
    { code: "SIGNATURE_INVALID", text: /must cover "\(request-target\)"/ },
    { policy: forPayments({ cover: ["(request-target)", "digest", "x-request-id"] }) },
  );
});

Deno.test("httpSignature() holds a signed date or (created) to the skew, and requires one where the policy says", async () => {
  const names = ["(request-target)", "digest", "x-request-id", "psu-id", "tpp-redirect-uri"];
  assert.equal((await run(await signed({ headers: names }))).response.status, 201);
  await rejected(await signed({ headers: names }), {
    code: "SIGNATURE_INVALID",
    text: /must cover "date" or "\(created\)"/,
  }, { policy: forPayments({ require_time: true }) });
  const stale = new Date(Date.now() - 301_000).toUTCString();
  await rejected(await signHttpSignature(tpp, input({ date: stale })), {
    code: "SIGNATURE_INVALID",
    text: /signed Date is more than 300 s away from the bank's clock/,
  });
  await rejected(await signHttpSignature(tpp, input({ date: "yesterday" })), {
    code: "SIGNATURE_INVALID",
    path: "Date",
    text: /must be an HTTP date/,
  });
  const created = ["(request-target)", "(created)", ...names.slice(1)];
  await rejected(
    await signed({ headers: created, created: Math.floor(Date.now() / 1000) + 400 }),
    { code: "SIGNATURE_INVALID", text: /signed created is more than 300 s away/ },
  );
  await rejected(
    await signed({ headers: created, expires: Math.floor(Date.now() / 1000) - 1 }),
    { code: "SIGNATURE_INVALID", text: /The Signature has expired/ },
  );
  const tighter = forPayments({ time_skew: "10s" });
  const late = new Date(Date.now() - 20_000).toUTCString();
  await rejected(await signHttpSignature(tpp, input({ date: late })), {
    code: "SIGNATURE_INVALID",
    text: /more than 10 s away/,
  }, { policy: tighter });
});

Deno.test("httpSignature() rejects an algorithm outside the allow-list", async () => {
  await rejected(await signed({ algorithm: "hmac-sha256" }), {
    code: "SIGNATURE_INVALID",
    text: /algorithm must be one of rsa-sha256, got "hmac-sha256"/,
  });
});

Deno.test("httpSignature() rejects a keyId that does not name the certificate sent", async () => {
  await rejected(await signed({ keyId: `SN=1234,CA=${tpp.cert.issuer}` }), {
    code: "SIGNATURE_INVALID",
    text: /keyId names SN=1234/,
  });
  await rejected(await signed({ keyId: "kid-1" }), {
    code: "SIGNATURE_INVALID",
    text: /keyId must look like "SN=<hex serial>,CA=<issuer DN>"/,
  });
});

Deno.test("httpSignature() rejects a malformed Signature header", async () => {
  await rejected({ ...await signed(), signature: "keyId=abc" }, {
    code: "SIGNATURE_INVALID",
    text: /list of name="value" parameters/,
  });
});

Deno.test("httpSignature() accepts a keyId with a percent-encoded DN and a hex or decimal serial", async () => {
  const forms = [
    keyIdOf(example, { percent: true }),
    keyIdOf(example, { serial: "decimal" }),
    keyIdOf(example, { serial: "decimal", percent: true }),
  ];
  assert.match(forms[0], /^SN=9FA1,CA=CN=Test%20QTSP%20CA,O=Test%20QTSP,C=GE$/);
  assert.match(forms[1], /^SN=40865,/);
  for (const keyId of forms) {
    const { response, body } = await run(await signed({ keyId }, example));
    assert.equal(response.status, 201, `${keyId}: ${JSON.stringify(body)}`);
  }
});

Deno.test("httpSignature() still refuses a keyId whose serial, in hex or decimal, or issuer is not the certificate's", async () => {
  const issuer = keyIdOf(example, { percent: true }).replace(/^SN=[^,]*,/, "");
  for (const keyId of [`SN=9FA2,${issuer}`, `SN=40866,${issuer}`, `SN=A09F,${issuer}`]) {
    await rejected(await signed({ keyId }, example), {
      code: "SIGNATURE_INVALID",
      text: /keyId names SN=/,
    });
  }
  const rogueIssuer = keyIdOf(rogue, { percent: true }).replace(/^SN=[^,]*,/, "");
  await rejected(await signed({ keyId: `SN=9FA1,${rogueIssuer}` }, example), {
    code: "SIGNATURE_INVALID",
    text: /keyId names SN=9FA1/,
  });
});

Deno.test("httpSignature() without algorithm takes rsa-sha256 from an RSA certificate key", async () => {
  const headers = await signed({ algorithm: null });
  assert.doesNotMatch(headers.signature, /algorithm=/);
  const { response, body } = await run(headers);
  assert.equal(response.status, 201, JSON.stringify(body));
  await rejected({ ...headers, "psu-id": "PSU-6666" }, {
    code: "SIGNATURE_INVALID",
    text: /signature value does not verify/,
  });
  await rejected(headers, {
    code: "SIGNATURE_INVALID",
    text: /RSA key implies rsa-sha256, which is not one of rsa-sha512/,
  }, {
    policy: forPayments({ algorithms: ["rsa-sha512"] }),
  });
});

Deno.test("httpSignature() without algorithm refuses an EC certificate key", async () => {
  await rejected(await signed({ algorithm: null }, tppEc), {
    code: "SIGNATURE_INVALID",
    text: /no algorithm and the signing certificate's key is ECDSA; only RSA keys are verified/,
  });
});

Deno.test("httpSignature() accepts hs2019 (RSASSA-PSS SHA-512) only when the policy allows it", async () => {
  const withHs2019 = forPayments({ algorithms: ["rsa-sha256", "hs2019"] });
  const headers = await signed({ algorithm: "hs2019" });
  await rejected(headers, {
    code: "SIGNATURE_INVALID",
    text: /algorithm must be one of rsa-sha256, got "hs2019"/,
  });
  const { response, body } = await run(headers, { policy: withHs2019 });
  assert.equal(response.status, 201, JSON.stringify(body));
  await rejected({ ...headers, "psu-id": "PSU-6666" }, {
    code: "SIGNATURE_INVALID",
    text: /signature value does not verify/,
  }, { policy: withHs2019 });
  // A PKCS#1 v1.5 signature labelled hs2019 is not RSASSA-PSS.
  const pkcs1 = await signed();
  await rejected(
    {
      ...pkcs1,
      signature: pkcs1.signature.replace('algorithm="rsa-sha256"', 'algorithm="hs2019"'),
    },
    { code: "SIGNATURE_INVALID", text: /signature value does not verify/ },
    {
      policy: withHs2019,
    },
  );
  await rejected(await signed({ algorithm: "hs2019" }, tppEc), {
    code: "SIGNATURE_INVALID",
    text: /key does not fit the algorithm hs2019/,
  }, { policy: withHs2019 });
});
