import assert from "node:assert/strict";
import {
  checkCoverage,
  checkSigner,
  coverageProblems,
  signatureFields,
  signedBytes,
  signedLines,
  type SignedRequest,
} from "../../../src/signing/signer.ts";
import { GatewayError } from "../../../src/psd2/errors.ts";
import { TrustStore } from "../../../src/pki/trust.ts";
import { trustSection } from "../../../src/pki/sections.ts";
import { createCa, issue } from "../../support/pki.ts";

function request(headers: Record<string, string>): SignedRequest {
  return { method: "POST", target: "/v1/payments/sepa?x=1", headers: new Headers(headers), now: 0 };
}

const COVERAGE = { always: ["(request-target)", "digest"], whenPresent: ["psu-id"] };

function coverage(covered: string[], headers: Record<string, string>): string | undefined {
  try {
    checkCoverage(
      covered,
      request(headers),
      COVERAGE,
      (text) => new GatewayError(401, "SIGNATURE_INVALID", text),
    );
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

Deno.test("signedLines() writes one line per name: the request target, else the trimmed value", () => {
  const r = request({ digest: "  SHA-256=abc  ", "x-request-id": "id-1" });
  assert.equal(
    signedLines(["(request-target)", "digest", "x-request-id", "psu-id"], r),
    "(request-target): post /v1/payments/sepa?x=1\ndigest: SHA-256=abc\nx-request-id: id-1\npsu-id: ",
  );
});

Deno.test("signedBytes() takes each character of the lines as one byte (header values as sent)", () => {
  // A UTF-8 PSU-ID as Deno hands it over: one character per byte.
  const sent = String.fromCharCode(...new TextEncoder().encode("ნინო"));
  const bytes = signedBytes(["psu-id"], request({ "psu-id": sent }));
  assert.deepEqual(bytes, new TextEncoder().encode("psu-id: ნინო"));
  // The highest byte too (ÿ, 0xFF, is still one byte as sent).
  assert.deepEqual(
    signedBytes(["psu-id"], request({ "psu-id": "\xff" })),
    new Uint8Array([...new TextEncoder().encode("psu-id: "), 0xff]),
  );
  // Text of the caller's own (above U+00FF) is its UTF-8.
  const own = { method: "POST", target: "/v1/ნ", headers: new Headers() };
  assert.deepEqual(
    signedBytes(["(request-target)"], own),
    new TextEncoder().encode("(request-target): post /v1/ნ"),
  );
});

Deno.test('signedBytes() keeps a final 0xA0 byte of a value (a UTF-8 "Р" ends in it)', () => {
  // Headers trims spaces and tabs only; String.prototype.trim() also cut U+00A0, the byte the
  // TPP signed as the end of its UTF-8 "ПЕТР", so the signature never verified.
  const sent = String.fromCharCode(...new TextEncoder().encode("ПЕТР"));
  assert.equal(sent.at(-1), "\xa0");
  const r = request({ "psu-id": sent, "x-request-id": "\xa0id-1\xa0" });
  assert.deepEqual(
    signedBytes(["psu-id", "x-request-id"], r),
    new Uint8Array([
      ...new TextEncoder().encode("psu-id: ПЕТР\nx-request-id: "),
      0xa0,
      ...new TextEncoder().encode("id-1"),
      0xa0,
    ]),
  );
});

Deno.test("checkCoverage() accepts a list that covers what it must and only headers the request has", () => {
  assert.equal(coverage(["(request-target)", "digest"], { digest: "d" }), undefined);
  assert.equal(
    coverage(["digest", "(request-target)", "psu-id"], { digest: "d", "psu-id": "p" }),
    undefined,
  );
});

Deno.test("checkCoverage() refuses names that are no header names, repeats, gaps and absent headers", () => {
  const h = { digest: "d", "psu-id": "p" };
  assert.equal(
    coverage(["(request-target)", "digest", "psu-id", "PSU-ID"], h),
    'lists "PSU-ID", which is no header name',
  );
  assert.equal(
    coverage(["(request-target)", "digest", "psu-id", "a b"], h),
    'lists "a b", which is no header name',
  );
  assert.equal(
    coverage(["(request-target)", "digest", "digest", "psu-id"], h),
    'lists "digest" twice',
  );
  assert.equal(coverage(["digest", "psu-id"], h), 'must cover "(request-target)"');
  assert.equal(
    coverage(["(request-target)", "digest"], h),
    'must cover "psu-id", which the request carries',
  );
  assert.equal(
    coverage(["(request-target)", "digest", "x-request-id"], { digest: "d" }),
    'covers "x-request-id" but the request has no such header',
  );
});

Deno.test("checkSigner() requires the signer to be trusted, to have the role, and to be the transport certificate's TPP", async () => {
  const ca = await createCa();
  const tpp = await issue(ca);
  const aisOnly = await issue(ca, { roles: ["PSP_AI"] });
  const store = new TrustStore(trustSection.parse({ anchors: [ca.pem] }));
  const role = { label: "signing certificate", path: "x-jws-signature" };
  const info = (cert: typeof tpp) => store.certificate(cert.base64, role);
  const check = async (cert: typeof tpp, transportTpp?: string) =>
    checkSigner(store, await info(cert), {
      request: { ...request({}), now: Date.now(), transportTpp },
      group: "pis",
      path: "x-jws-signature",
    });
  await check(tpp);
  await check(tpp, "PSDGE-NBG-123456");
  await assert.rejects(check(tpp, "PSDGE-NBG-999999"), (error) => {
    assert.ok(error instanceof GatewayError);
    assert.equal(error.status, 401);
    assert.equal(error.code, "SIGNATURE_INVALID");
    assert.equal(error.path, "x-jws-signature");
    assert.equal(
      error.message,
      'The signing certificate belongs to TPP "PSDGE-NBG-123456", the transport certificate to "PSDGE-NBG-999999"',
    );
    return true;
  });
  await assert.rejects(check(aisOnly), { code: "ROLE_INVALID" });
});

Deno.test("signatureFields() and coverageProblems(): the standard's minimum is the default and the floor", () => {
  const fields = signatureFields();
  assert.equal(fields.required.parse(undefined), false);
  assert.deepEqual(fields.cover.parse(undefined), ["digest", "x-request-id"]);
  assert.deepEqual(fields.cover_when_present.parse(undefined), [
    "psu-id",
    "psu-corporate-id",
    "tpp-redirect-uri",
  ]);
  assert.throws(() => fields.cover.parse(["Digest"]), /a lower-case header name/);
  assert.throws(() => fields.cover.parse(["digest x"]), /a lower-case header name/);
  assert.deepEqual(fields.cover.parse(["(request-target)", "x-a-1"]), [
    "(request-target)",
    "x-a-1",
  ]);
  const standard = ["psu-id", "psu-corporate-id", "tpp-redirect-uri"];
  assert.deepEqual(coverageProblems({ cover: ["digest"], cover_when_present: standard }), [
    'cover must include "x-request-id"',
  ]);
  assert.deepEqual(
    coverageProblems({ cover: ["x-request-id"], cover_when_present: standard }),
    ['cover must include "digest"'],
  );
  // More than the standard is the bank's to ask; a header always covered need not be listed twice.
  assert.deepEqual(
    coverageProblems({
      cover: ["(request-target)", "digest", "x-request-id", "psu-id"],
      cover_when_present: ["psu-corporate-id", "tpp-redirect-uri", "consent-id"],
    }),
    [],
  );
  assert.deepEqual(
    coverageProblems({ cover: ["digest", "x-request-id"], cover_when_present: ["psu-id"] }),
    [
      'cover_when_present must include "psu-corporate-id"',
      'cover_when_present must include "tpp-redirect-uri"',
    ],
  );
});
