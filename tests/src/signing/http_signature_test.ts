import assert from "node:assert/strict";
import { HttpSignatureVerifier, signatureParams } from "../../../src/signing/http_signature.ts";
import { TrustStore } from "../../../src/pki/trust.ts";
import { trustSection } from "../../../src/pki/sections.ts";
import { GatewayError } from "../../../src/psd2/errors.ts";
import { createCa, issue } from "../../support/pki.ts";
import {
  type HttpSignatureOptions,
  keyIdOf,
  PAYMENT_BODY,
  signHttpSignature,
} from "../../support/signing.ts";

const ca = await createCa();
const tpp = await issue(ca);
const ecTpp = await issue(ca, { keyType: "EC" });
const store = new TrustStore(trustSection.parse({ anchors: [ca.pem] }));
const coverage = {
  always: ["(request-target)", "digest", "x-request-id"],
  whenPresent: ["psu-id"],
};
const verifier = new HttpSignatureVerifier(store, {
  algorithms: ["rsa-sha256"],
  coverage,
  group: "pis",
  skewMs: 300_000,
});
const TARGET = "/v1/payments/domestic";
const NAMES = ["(request-target)", "date", "digest", "x-request-id"];

async function signed(options: HttpSignatureOptions = {}, signer = tpp, date?: string) {
  return new Headers(
    await signHttpSignature(signer, {
      method: "POST",
      target: TARGET,
      headers: {
        "x-request-id": "99391c7e-ad88-49ec-a2ad-99ddcb1f7721",
        ...(date ? { date } : {}),
      },
      body: PAYMENT_BODY,
    }, options),
  );
}

function verify(headers: Headers, value = headers.get("signature")!, now = Date.now()) {
  return verifier.verify(value, { method: "POST", target: TARGET, headers, now });
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

Deno.test('signatureParams() reads name="value" pairs and Unix times, with spaces around, and nothing else', () => {
  assert.deepEqual(signatureParams(' a="1" , b = "x y",c="", created=1700000000.5'), {
    a: "1",
    b: "x y",
    c: "",
    created: "1700000000.5",
  });
  assert.deepEqual(signatureParams(""), {});
  const malformed = 'Header "Signature" must be a list of name="value" parameters';
  for (const bad of ["a=x", 'a="1" b="2"', 'a="1",,b="2"', 'a="1";', '"1"', 'a="1", x']) {
    assert.throws(() => signatureParams(bad), (error: Error) => error.message === malformed, bad);
  }
  assert.throws(
    () => signatureParams('a="1",a="2"'),
    (error: Error) => error.message === 'Header "Signature" repeats the parameter "a"',
  );
});

Deno.test("HttpSignatureVerifier.verify() accepts a valid signature, the algorithm in any case or left out, without a callback", async () => {
  const headers = await signed();
  assert.equal((await verify(headers)).organizationId, "PSDGE-NBG-123456");
  await verify(headers, withParam(headers, "algorithm", "RSA-SHA256"));
  await verify(headers, withParam(headers, "algorithm", undefined));
});

Deno.test("HttpSignatureVerifier.verify() requires keyId, headers and signature, and no empty algorithm", async () => {
  const headers = await signed();
  for (const name of ["keyId", "headers", "signature"]) {
    for (const value of [undefined, ""]) {
      await refused(
        verify(headers, withParam(headers, name, value)),
        `Header "Signature" must carry ${name}="..."`,
      );
    }
  }
  await refused(
    verify(headers, withParam(headers, "algorithm", "")),
    'Header "Signature" has an empty algorithm=""',
  );
});

Deno.test("HttpSignatureVerifier.verify() refuses an algorithm outside the list, named or implied", async () => {
  const headers = await signed();
  await refused(
    verify(headers, withParam(headers, "algorithm", "hmac-sha256")),
    'The Signature algorithm must be one of rsa-sha256, got "hmac-sha256"',
  );
  const pss = new HttpSignatureVerifier(store, {
    algorithms: ["hs2019"],
    coverage,
    group: "pis",
    skewMs: 300_000,
  });
  const implied = await signed({ algorithm: null });
  await refused(
    pss.verify(implied.get("signature")!, {
      method: "POST",
      target: TARGET,
      headers: implied,
      now: Date.now(),
    }),
    "The Signature has no algorithm; the signing certificate's RSA key implies rsa-sha256, which is not one of hs2019",
  );
  const hs2019 = await signed({ algorithm: "hs2019" });
  await pss.verify(hs2019.get("signature")!, {
    method: "POST",
    target: TARGET,
    headers: hs2019,
    now: Date.now(),
  });
});

Deno.test("HttpSignatureVerifier.verify() reads keyId as SN=<hex or decimal>,CA=<DN, plain or percent-encoded>", async () => {
  const headers = await signed();
  for (
    const keyId of [
      keyIdOf(tpp).replace(",CA=", ", CA="),
      keyIdOf(tpp, { serial: "decimal" }),
      keyIdOf(tpp, { percent: true }),
      `SN=${tpp.cert.serialNumber.toLowerCase()},CA=${tpp.cert.issuer}`,
    ]
  ) {
    await verify(headers, withParam(headers, "keyId", keyId));
  }
  const keyId = keyIdOf(tpp);
  const text = 'The Signature keyId must look like "SN=<hex serial>,CA=<issuer DN>"';
  for (
    const bad of [
      keyId.replace("SN=", "XSN="),
      keyId.replace("SN=", "SN=zz"),
      keyId.replace(/SN=[0-9A-F]+/, `SN=${"1".repeat(65)}`),
      keyId.replace(",CA=", ",DN="),
      keyId.replace(/,CA=.*/, ",CA="),
      keyId.split(",CA=")[0],
    ]
  ) {
    await refused(verify(headers, withParam(headers, "keyId", bad)), text);
  }
});

Deno.test("HttpSignatureVerifier.verify() requires keyId to name the certificate sent", async () => {
  const headers = await signed();
  const serial = tpp.cert.serialNumber.toUpperCase();
  const own = `SN=${(await verify(headers)).serial}, CA=${tpp.cert.issuer}`;
  const other = `SN=0${serial}1,CA=${tpp.cert.issuer}`;
  await refused(
    verify(headers, withParam(headers, "keyId", other)),
    `The Signature keyId names SN=0${serial}1, CA=${tpp.cert.issuer}; the certificate in "TPP-Signature-Certificate" is ${own}`,
  );
  const otherCa = `SN=${serial},CA=CN=Another CA, O=Test QTSP, C=GE`;
  await refused(
    verify(headers, withParam(headers, "keyId", otherCa)),
    `The Signature keyId names SN=${serial}, CA=CN=Another CA, O=Test QTSP, C=GE; the certificate in "TPP-Signature-Certificate" is ${own}`,
  );
});

Deno.test("HttpSignatureVerifier.verify() takes the headers list in any case and spacing", async () => {
  const headers = await signed({ headers: NAMES });
  await verify(
    headers,
    withParam(headers, "headers", "  (Request-Target) DATE Digest   X-Request-ID "),
  );
  await refused(
    verify(headers, withParam(headers, "headers", "(request-target) date digest")),
    'The Signature headers list must cover "x-request-id"',
  );
});

Deno.test("HttpSignatureVerifier.verify() holds a signed time to the skew: Date or (created), and expires not passed", async () => {
  const now = Date.now();
  const noTime = await signed({ headers: ["(request-target)", "digest", "x-request-id"] });
  await verify(noTime);
  const timed = new HttpSignatureVerifier(store, {
    algorithms: ["rsa-sha256"],
    coverage,
    group: "pis",
    skewMs: 300_000,
    requireTime: true,
  });
  const verifyTimed = (headers: Headers) =>
    timed.verify(headers.get("signature")!, { method: "POST", target: TARGET, headers, now });
  await refused(verifyTimed(noTime), 'The Signature headers list must cover "date" or "(created)"');
  await verifyTimed(await signed());
  const created = ["(request-target)", "(created)", "digest", "x-request-id"];
  const seconds = Math.floor(now / 1000);
  await verify(await signed({ headers: created, created: seconds }), undefined, now);
  const withoutParam = await signed({ headers: created, created: seconds });
  await refused(
    verify(withoutParam, withParam(withoutParam, "created", undefined), now),
    'The Signature covers "(created)" but has no created parameter',
  );
  await refused(
    verify(withoutParam, withParam(withoutParam, "created", "soon"), now),
    "The Signature created must be a Unix time in seconds",
  );
  await refused(
    verify(await signed({ headers: created, created: seconds - 301 }), undefined, now),
    "The signed created is more than 300 s away from the bank's clock",
  );
  await verify(await signed({ headers: created, created: seconds + 299 }), undefined, now);
  const date = (ms: number) => new Date(ms).toUTCString();
  await verify(await signed({}, tpp, date(now - 299_000)), undefined, now);
  await refused(
    verify(await signed({}, tpp, date(now + 302_000)), undefined, now),
    "The signed Date is more than 300 s away from the bank's clock",
  );
  await refused(
    verify(await signed({}, tpp, "yesterday"), undefined, now),
    'Header "Date" must be an HTTP date like Tue, 07 Jun 2026 20:51:35 GMT',
    { path: "Date" },
  );
  await verify(await signed({ expires: seconds + 60 }), undefined, now);
  await refused(
    verify(await signed({ expires: seconds - 1 }), undefined, now),
    "The Signature has expired",
  );
  const expires = await signed({ expires: seconds + 60 });
  await refused(
    verify(expires, withParam(expires, "expires", "later"), now),
    "The Signature expires must be a Unix time in seconds",
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

Deno.test("HttpSignatureVerifier.verify() refuses a key that is not RSA, a signature that is not base64 or does not verify", async () => {
  const ec = await signed({ keyId: keyIdOf(ecTpp) }, ecTpp);
  await refused(verify(ec), "The signing certificate's key does not fit the algorithm rsa-sha256");
  await refused(
    verify(ec, withParam(ec, "algorithm", undefined)),
    "The Signature has no algorithm and the signing certificate's key is ECDSA; only RSA keys are verified",
  );
  const headers = await signed();
  await refused(
    verify(headers, withParam(headers, "signature", "not base64!")),
    "The Signature signature must be base64",
  );
  headers.set("x-request-id", "0e8a3f7c-0000-4000-8000-000000000000");
  await refused(
    verify(headers),
    "The Signature signature value does not verify over (request-target), date, digest, x-request-id with the signing certificate",
  );
});

Deno.test("signatureParams() reads a Unix time with a fraction of several digits", () => {
  assert.deepEqual(signatureParams("created=1700000000.55,expires=1700000300"), {
    created: "1700000000.55",
    expires: "1700000300",
  });
});

Deno.test("HttpSignatureVerifier.verify() takes created and expires only as Unix seconds, fractions allowed", async () => {
  const now = Date.now();
  const seconds = Math.floor(now / 1000);
  const created = ["(request-target)", "(created)", "digest", "x-request-id"];
  const headers = await signed({ headers: created, created: seconds });
  for (const bad of [`x${seconds}`, `${seconds}x`, `${seconds}.`, `${seconds}.1234567890`]) {
    await refused(
      verify(headers, withParam(headers, "created", bad), now),
      "The Signature created must be a Unix time in seconds",
    );
  }
  // A well-formed created that is not the one signed: read, then the value does not verify.
  await refused(
    verify(headers, withParam(headers, "created", `${seconds}.25`), now),
    "The Signature signature value does not verify over (request-target), (created), digest, x-request-id with the signing certificate",
  );
});

Deno.test("HttpSignatureVerifier.verify() signs (expires) as a pseudo-header, and judges only the times it covers", async () => {
  const now = Date.now();
  const seconds = Math.floor(now / 1000);
  await verify(
    await signed({
      headers: ["(request-target)", "(created)", "(expires)", "digest", "x-request-id"],
      created: seconds,
      expires: seconds + 60,
    }),
    undefined,
    now,
  );
  // (created) alone: no Date needed; a created parameter not covered is not judged.
  const createdOnly = await signed({
    headers: ["(request-target)", "(created)", "digest", "x-request-id"],
    created: seconds,
  });
  createdOnly.delete("date");
  await verify(createdOnly, undefined, now);
  const dateOnly = await signed({ created: seconds - 3600 });
  await verify(dateOnly, undefined, now);
});

Deno.test("HttpSignatureVerifier.verify() allows a signed time exactly at the skew and expires exactly now", async () => {
  const now = Math.floor(Date.now() / 1000) * 1000;
  const created = ["(request-target)", "(created)", "digest", "x-request-id"];
  await verify(await signed({ headers: created, created: now / 1000 - 300 }), undefined, now);
  await verify(await signed({ expires: now / 1000 }), undefined, now);
});

Deno.test("HttpSignatureVerifier.verify() compares the keyId's issuer by its RDNs in any order, case and spacing", async () => {
  const headers = await signed();
  const serial = tpp.cert.serialNumber.toUpperCase();
  // The issuer is CN=Test QTSP CA, O=Test QTSP, C=GE.
  for (
    const ca of [
      "C=GE, O=Test QTSP, CN=Test QTSP CA",
      "cn=test qtsp ca,o=test qtsp,c=ge",
      "CN =Test QTSP CA, O= Test QTSP, C = GE",
      "CN=Test QTSP CA, O=Test QTSP, C=GE,",
    ]
  ) {
    await verify(headers, withParam(headers, "keyId", `SN=${serial},CA=${ca}`));
  }
  for (
    const ca of [
      "CN=Test QTSP CA, O=Test QTSP, CG=E",
      "C=GECN=Test QTSP CA, O=Test QTSP",
      "CN=Test QTSP CA, O=Test QTSP, C=GE%zz",
    ]
  ) {
    const keyId = `SN=${serial},CA=${ca}`;
    await assert.rejects(
      verify(headers, withParam(headers, "keyId", keyId)),
      (error) => error instanceof GatewayError && /^The Signature keyId names /.test(error.message),
      ca,
    );
  }
});

Deno.test("HttpSignatureVerifier.verify() percent-decodes the keyId's DN, not the certificate's", async () => {
  // A CA whose name holds a percent sign that looks like an escape.
  const odd = await createCa("Probe%41 CA");
  const signer = await issue(odd);
  const oddStore = new TrustStore(trustSection.parse({ anchors: [odd.pem] }));
  const oddVerifier = new HttpSignatureVerifier(oddStore, {
    algorithms: ["rsa-sha256"],
    coverage,
    group: "pis",
    skewMs: 300_000,
  });
  const encoded = signer.cert.issuer.split(", ").map((rdn) =>
    rdn.replace(/%/g, "%25").replace(/ /g, "%20")
  ).join(",");
  const headers = await signed({ keyId: `SN=${signer.cert.serialNumber},CA=${encoded}` }, signer);
  await oddVerifier.verify(headers.get("signature")!, {
    method: "POST",
    target: TARGET,
    headers,
    now: Date.now(),
  });
});

Deno.test("HttpSignatureVerifier.verify() compares the keyId's issuer in lower case: a dotless ı is no I", async () => {
  // As LDAP's case folding: "TıST" and "tıst" name one CA, "TIST" (whose lower case is "tist")
  // another; upper case would merge ı and i into I.
  const dotless = await createCa("Tıst CA");
  const signer = await issue(dotless);
  const dotlessVerifier = new HttpSignatureVerifier(
    new TrustStore(trustSection.parse({ anchors: [dotless.pem] })),
    { algorithms: ["rsa-sha256"], coverage, group: "pis", skewMs: 300_000 },
  );
  const keyId = (cn: string) =>
    `SN=${signer.cert.serialNumber},CA=CN=${encodeURIComponent(cn)}, O=Test QTSP, C=GE`;
  const headers = await signed({ keyId: keyId("Tıst CA") }, signer);
  const call = (cn: string) =>
    dotlessVerifier.verify(withParam(headers, "keyId", keyId(cn)), {
      method: "POST",
      target: TARGET,
      headers,
      now: Date.now(),
    });
  await call("TıST CA");
  await assert.rejects(
    call("TIST CA"),
    (error) => error instanceof GatewayError && /^The Signature keyId names /.test(error.message),
  );
});

Deno.test("HttpSignatureVerifier.verify() lists the algorithms it allows in its texts", async () => {
  const two = new HttpSignatureVerifier(store, {
    algorithms: ["rsa-sha512", "hs2019"],
    coverage,
    group: "pis",
    skewMs: 300_000,
  });
  const headers = await signed();
  const call = (value: string) =>
    two.verify(value, { method: "POST", target: TARGET, headers, now: Date.now() });
  await refused(
    call(headers.get("signature")!),
    'The Signature algorithm must be one of rsa-sha512, hs2019, got "rsa-sha256"',
  );
  await refused(
    call(withParam(headers, "algorithm", undefined)),
    "The Signature has no algorithm; the signing certificate's RSA key implies rsa-sha256, which is not one of rsa-sha512, hs2019",
  );
});

Deno.test("HttpSignatureVerifier.verify() names the signing certificate and its header when it cannot be read", async () => {
  const headers = await signed();
  headers.set("tpp-signature-certificate", "bm90IGEgY2VydGlmaWNhdGU=");
  await assert.rejects(verify(headers), (error) => {
    assert.ok(error instanceof GatewayError);
    assert.equal(error.code, "CERTIFICATE_INVALID");
    assert.equal(error.path, "TPP-Signature-Certificate");
    assert.match(error.message, /^The signing certificate cannot be read/);
    return true;
  });
});
