import assert from "node:assert/strict";
import { HttpSignatureVerifier, signatureParams } from "../../../src/signing/http_signature.ts";
import { TrustStore } from "../../../src/pki/trust.ts";
import { trustSection } from "../../../src/pki/sections.ts";
import { GatewayError } from "../../../src/core/errors.ts";
import { normalSerial } from "../../../src/pki/certificate.ts";
import { createCa, issue } from "../../support/pki.ts";
import {
  type HttpSignatureOptions,
  PAYMENT_BODY,
  signHttpSignature,
} from "../../support/signing.ts";

const ca = await createCa();
const tpp = await issue(ca);
const ecTpp = await issue(ca, { keyType: "EC" });
const store = new TrustStore(trustSection.parse({ anchors: [ca.pem] }));
const verifier = new HttpSignatureVerifier(store, {
  algorithms: ["rsa-sha256"],
  coverage: { always: ["digest", "x-request-id"], whenPresent: ["psu-id"] },
  group: "pis",
});
const TARGET = "/v1/payments/domestic";

async function signed(options: HttpSignatureOptions = {}, signer = tpp) {
  return new Headers(
    await signHttpSignature(signer, {
      method: "POST",
      target: TARGET,
      headers: { "x-request-id": "99391c7e-ad88-49ec-a2ad-99ddcb1f7721" },
      body: PAYMENT_BODY,
    }, options),
  );
}

function verify(headers: Headers, value = headers.get("signature")!) {
  return verifier.verify(value, { method: "POST", target: TARGET, headers, now: Date.now() });
}

/** Asserts a 401 with this code, text and path. */
async function refused(
  promise: Promise<unknown>,
  text: string,
  options: { code?: string; path?: string } = {},
) {
  await assert.rejects(promise, (error) => {
    assert.ok(error instanceof GatewayError, String(error));
    assert.equal(error.message, text);
    assert.equal(error.status, 401);
    assert.equal(error.code, options.code ?? "SIGNATURE_INVALID");
    assert.equal(error.path, options.path ?? "Signature");
    return true;
  });
}

/** The Signature value with one parameter replaced (or removed with `undefined`). */
function withParam(headers: Headers, name: string, value: string | undefined): string {
  const params = signatureParams(headers.get("signature")!);
  if (value === undefined) delete params[name];
  else params[name] = value;
  return Object.entries(params).map(([n, v]) => `${n}="${v}"`).join(",");
}

Deno.test('signatureParams() reads name="value" pairs with spaces around, and nothing else', () => {
  assert.deepEqual(signatureParams(' a="1" , b = "x y",c=""'), { a: "1", b: "x y", c: "" });
  assert.deepEqual(signatureParams(""), {});
  const malformed = 'Header "Signature" must be a list of name="value" parameters';
  for (const bad of ["a=1", 'a="1" b="2"', 'a="1",,b="2"', 'a="1";', '"1"', 'a="1", x']) {
    assert.throws(() => signatureParams(bad), (error: Error) => error.message === malformed, bad);
  }
  assert.throws(
    () => signatureParams('a="1",a="2"'),
    (error: Error) => error.message === 'Header "Signature" repeats the parameter "a"',
  );
});

Deno.test("HttpSignatureVerifier.verify() accepts a valid signature, the algorithm in any case, without a callback", async () => {
  const headers = await signed();
  assert.equal((await verify(headers)).organizationId, "PSDGE-NBG-123456");
  await verify(headers, withParam(headers, "algorithm", "RSA-SHA256"));
});

Deno.test("HttpSignatureVerifier.verify() requires keyId, algorithm, headers and signature", async () => {
  const headers = await signed();
  for (const name of ["keyId", "algorithm", "headers", "signature"]) {
    await refused(
      verify(headers, withParam(headers, name, undefined)),
      `Header "Signature" must carry ${name}="..."`,
    );
    await refused(
      verify(headers, withParam(headers, name, "")),
      `Header "Signature" must carry ${name}="..."`,
    );
  }
});

Deno.test("HttpSignatureVerifier.verify() refuses an algorithm outside the list", async () => {
  const headers = await signed();
  await refused(
    verify(headers, withParam(headers, "algorithm", "hmac-sha256")),
    'The Signature algorithm must be one of rsa-sha256, got "hmac-sha256"',
  );
  await refused(
    verify(headers, withParam(headers, "algorithm", "rsa-sha512")),
    'The Signature algorithm must be one of rsa-sha256, got "rsa-sha512"',
  );
});

Deno.test("HttpSignatureVerifier.verify() reads keyId as SN=<hex>,CA=<DN>, space after the comma allowed", async () => {
  const headers = await signed();
  const keyId = signatureParams(headers.get("signature")!).keyId;
  await verify(headers, withParam(headers, "keyId", keyId.replace(",CA=", ", CA=")));
  const text = 'The Signature keyId must look like "SN=<hex serial>,CA=<issuer DN>"';
  for (
    const bad of [
      keyId.replace("SN=", "XSN="),
      keyId.replace("SN=", "SN=zz"),
      keyId.replace(",CA=", ",DN="),
      keyId.replace(/,CA=.*/, ",CA="),
      `${keyId.split(",CA=")[0]}`,
    ]
  ) {
    await refused(verify(headers, withParam(headers, "keyId", bad)), text);
  }
});

Deno.test("HttpSignatureVerifier.verify() takes the headers list in any case and spacing", async () => {
  const headers = await signed({ headers: ["digest", "x-request-id"] });
  await verify(headers, withParam(headers, "headers", "  Digest   X-Request-ID "));
  await refused(
    verify(headers, withParam(headers, "headers", "digest")),
    'The Signature headers list must cover "x-request-id"',
  );
});

Deno.test("HttpSignatureVerifier.verify() requires the signing certificate in TPP-Signature-Certificate", async () => {
  const headers = await signed();
  headers.delete("tpp-signature-certificate");
  await refused(
    verify(headers),
    'Header "TPP-Signature-Certificate" must carry the signing certificate',
    { code: "CERTIFICATE_MISSING", path: "TPP-Signature-Certificate" },
  );
});

Deno.test("HttpSignatureVerifier.verify() requires keyId to name the certificate sent", async () => {
  const headers = await signed();
  const serial = tpp.cert.serialNumber.toUpperCase();
  const known = normalSerial(serial);
  const lower = `SN=${serial.toLowerCase()},CA=${tpp.cert.issuer}`;
  await verify(headers, withParam(headers, "keyId", lower));
  const other = `SN=0${serial}1,CA=${tpp.cert.issuer}`;
  await refused(
    verify(headers, withParam(headers, "keyId", other)),
    `The Signature keyId names SN=0${serial}1, CA=${tpp.cert.issuer}; the certificate in "TPP-Signature-Certificate" is SN=${known}, CA=${tpp.cert.issuer}`,
  );
  const otherCa = `SN=${serial},CA=CN=Another CA, O=Test QTSP, C=GE`;
  await refused(
    verify(headers, withParam(headers, "keyId", otherCa)),
    `The Signature keyId names SN=${serial}, CA=CN=Another CA, O=Test QTSP, C=GE; the certificate in "TPP-Signature-Certificate" is SN=${known}, CA=${tpp.cert.issuer}`,
  );
});

Deno.test("HttpSignatureVerifier.verify() refuses a key that is not RSA, a signature that is not base64 or does not verify", async () => {
  const ec = await signed({ keyId: `SN=${ecTpp.cert.serialNumber},CA=${ca.cert.subject}` });
  ec.set("tpp-signature-certificate", ecTpp.base64);
  await refused(verify(ec), "The signing certificate's key does not fit the algorithm rsa-sha256");
  const headers = await signed();
  await refused(
    verify(headers, withParam(headers, "signature", "not base64!")),
    "The Signature signature must be base64",
  );
  headers.set("x-request-id", "0e8a3f7c-0000-4000-8000-000000000000");
  await refused(
    verify(headers),
    "The Signature signature value does not verify over digest, x-request-id with the signing certificate",
  );
});
