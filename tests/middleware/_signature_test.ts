/**
 * What both signature checks do alike (middleware/_signature.ts and the verifier core): each test
 * runs for `jws_signature` and `http_signature`, signing with the scheme's own signer.
 */
import assert from "node:assert/strict";
// In-process through the app's fetch (the upstream is still real HTTP); see tests/support/gateway.ts.
import { gatewayApp as startGateway } from "../support/gateway.ts";
import { closedPort } from "../support/upstream.ts";
import { signedUnderSoftRevocation } from "../support/soft_revocation.ts";
import { type Issued, nginxHeader } from "../support/pki.ts";
import {
  paymentInput,
  type SignatureCheck,
  signatureRig,
  signers,
} from "../support/signature_rig.ts";
import { PAYMENT_BODY, signHttpSignature, type SignInput, signJws } from "../support/signing.ts";

const certificates = await signers();
const { tpp } = certificates;

/** A scheme: its check, headers, skew option and signer. */
const SCHEMES = [
  {
    check: "jws_signature",
    name: "jwsSignature()",
    header: "x-jws-signature",
    certificatePath: "x-jws-signature",
    skew: "sigt_skew",
    sign: (signer: Issued, input: SignInput) => signJws(signer, input),
  },
  {
    check: "http_signature",
    name: "httpSignature()",
    header: "Signature",
    certificatePath: "TPP-Signature-Certificate",
    skew: "time_skew",
    sign: (signer: Issued, input: SignInput) => signHttpSignature(signer, input),
  },
] as const;

/** Each scheme with its rig and a signer of the standard payment initiation. */
const schemes = SCHEMES.map((scheme) => ({
  ...scheme,
  rig: signatureRig(scheme.check as SignatureCheck, certificates),
  signed: (signer = tpp, headers: Record<string, string> = {}) =>
    scheme.sign(signer, paymentInput(headers)),
}));

Deno.test("jwsSignature() and httpSignature() accept a valid signature and let the signer identify the TPP", async () => {
  for (const { rig, signed, name } of schemes) {
    const { response, reached, log } = await rig.run(await signed());
    assert.equal(response.status, 201, name);
    assert.equal(reached, 1, name);
    assert.equal(log.find((l) => l.op === "initiatePayment")?.tpp, "PSDGE-NBG-123456", name);
  }
});

Deno.test("jwsSignature() and httpSignature() verify a UTF-8 PSU-ID as the bytes that were sent, a final 0xA0 byte too", async () => {
  // The TPP signs the header's UTF-8 bytes; the gateway reads header values one character per
  // byte and must verify those bytes, not encode them to UTF-8 a second time. "Р" is D0 A0 in
  // UTF-8: read one character per byte, "ПЕТР" ends in U+00A0, which String.prototype.trim()
  // took off the signed line (it is no HTTP whitespace).
  for (const { rig, signed, name } of schemes) {
    for (const psuId of ["ნინო ბერიძე", "ПЕТР"]) {
      const sent = String.fromCharCode(...new TextEncoder().encode(psuId));
      const { response, body, reached } = await rig.run({
        ...await signed(tpp, { "psu-id": psuId }),
        "psu-id": sent,
      });
      assert.equal(response.status, 201, `${name} ${psuId}: ${JSON.stringify(body)}`);
      assert.equal(reached, 1);
    }
  }
});

Deno.test("jwsSignature() and httpSignature() answer SIGNATURE_MISSING where required, and pass where optional", async () => {
  for (const { rig, header } of schemes) {
    const headers = paymentInput().headers;
    await rig.rejected(headers, {
      code: "SIGNATURE_MISSING",
      path: header,
      text: new RegExp(`^Header "${header}" is required for this operation$`),
    });
    const optional = rig.forPayments({ required: false });
    assert.equal((await rig.run(headers, { policy: optional })).response.status, 201, header);
  }
});

Deno.test("jwsSignature() and httpSignature() refuse a header changed after signing", async () => {
  for (const { rig, signed, header } of schemes) {
    await rig.rejected({ ...await signed(), "psu-id": "PSU-6666" }, {
      code: "SIGNATURE_INVALID",
      path: header,
      text: /signature value does not verify over .* with the signing certificate$/,
    });
  }
});

Deno.test("jwsSignature() and httpSignature() refuse a body changed after signing, by the digest check or their own", async () => {
  const changed = PAYMENT_BODY.replace("123.50", "9123.50");
  for (const { rig, signed, header } of schemes) {
    const headers = await signed();
    await rig.rejected(headers, {
      status: 400,
      code: "FORMAT_ERROR",
      path: "Digest",
      text: /does not match the request body/,
    }, { body: changed });
    // Without the digest check, the signature check itself binds the body.
    await rig.rejected(headers, {
      code: "SIGNATURE_INVALID",
      path: header,
      text: /signed "digest" header does not match the request body/,
    }, { body: changed, policy: rig.policy({ defaults: { digest: { mode: "off" } } }) });
  }
});

Deno.test("jwsSignature() and httpSignature() apply the certificate checks: CA, dates, blocked list, role, same TPP", async () => {
  const { rogue, expired, blocked, aisOnly, otherTpp } = certificates;
  for (const { rig, signed, certificatePath } of schemes) {
    await rig.rejected(await signed(rogue), {
      code: "CERTIFICATE_INVALID",
      text: /signing certificate does not chain to a trust anchor/,
      path: certificatePath,
    });
    await rig.rejected(await signed(expired), {
      code: "CERTIFICATE_EXPIRED",
      text: /signing certificate expired on/,
    });
    await rig.rejected(await signed(blocked), {
      code: "CERTIFICATE_BLOCKED",
      text: /serial badc0de\) is blocked/,
    });
    await rig.rejected(await signed(aisOnly), {
      code: "ROLE_INVALID",
      text: /must carry the PSD2 role PSP_PI .* it has PSP_AI/,
    });
    await rig.rejected({ ...await signed(otherTpp), "x-ssl-client-cert": nginxHeader(tpp) }, {
      code: "SIGNATURE_INVALID",
      text: /belongs to TPP "PSDGE-NBG-999999", the transport certificate to "PSDGE-NBG-123456"/,
    });
    const same = { ...await signed(), "x-ssl-client-cert": nginxHeader(tpp) };
    assert.equal((await rig.run(same)).response.status, 201, certificatePath);
  }
});

Deno.test("jwsSignature() and httpSignature() apply the policy's QC types to the signing certificate", async () => {
  for (const { rig, signed, certificatePath } of schemes) {
    await rig.rejected(await signed(certificates.qwac), {
      code: "CERTIFICATE_INVALID",
      text:
        /^The signing certificate is a QWAC \(id-etsi-qct-web\); this operation accepts QSealC$/,
      path: certificatePath,
    }, { policy: rig.forPayments({ types: ["QSealC"] }) });
    assert.equal((await rig.run(await signed(certificates.qwac))).response.status, 201);
  }
});

Deno.test("jwsSignature() and httpSignature() pass a signer whose responder is down under soft revocation, counted for their check", async () => {
  for (const { rig, signed, check } of schemes) {
    const text = rig.policy({
      trust: {
        anchors: [certificates.ca.pem],
        revocation: { ocsp_responder: `http://127.0.0.1:${closedPort()}`, methods: ["ocsp"] },
      },
      defaults: { [check]: { revocation: "soft" } },
    });
    const outcome = await signedUnderSoftRevocation(text, await signed(), check);
    assert.equal(outcome.status, 201, outcome.text);
    assert.equal(outcome.softPasses, 1, check);
  }
});

Deno.test("jwsSignature() and httpSignature() refuse a skew under 1s or over 1h", async () => {
  for (const { rig, skew } of schemes) {
    for (const [value, text] of [["500ms", /must be at least 1s/], ["61m", /must be at most 1h/]]) {
      await assert.rejects(
        () => startGateway({ policy: rig.forPayments({ [skew]: value as string }) }),
        text as RegExp,
      );
    }
    for (const value of ["1s", "1h"]) {
      await using gateway = await startGateway({ policy: rig.forPayments({ [skew]: value }) });
      assert.ok(gateway.url, `${skew} ${value}`);
    }
  }
});

Deno.test("jwsSignature() and httpSignature() refuse a policy whose cover lists leave out the standard's minimum", async () => {
  for (const { rig } of schemes) {
    await assert.rejects(
      () =>
        startGateway({ policy: rig.forPayments({ cover: ["(request-target)", "x-request-id"] }) }),
      /cover must include "digest"/,
    );
    await assert.rejects(
      () =>
        startGateway({ policy: rig.forPayments({ cover_when_present: ["psu-id", "consent-id"] }) }),
      /cover_when_present must include "psu-corporate-id"/,
    );
  }
});
