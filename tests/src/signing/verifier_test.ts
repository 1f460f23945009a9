import assert from "node:assert/strict";
import { outsideSkew, RequestSignatureVerifier } from "../../../src/signing/verifier.ts";
import type { SignedRequest } from "../../../src/signing/signer.ts";
import type { CertificateInfo } from "../../../src/pki/certificate.ts";
import { GatewayError } from "../../../src/psd2/errors.ts";
import { TrustStore } from "../../../src/pki/trust.ts";
import { trustSection } from "../../../src/pki/sections.ts";
import { createCa, issue } from "../../support/pki.ts";

Deno.test("outsideSkew() lets a time exactly at the skew pass, either way, and not a millisecond more", () => {
  assert.equal(outsideSkew(1_000_000, 700_000, 300_000), false);
  assert.equal(outsideSkew(1_000_000, 1_300_000, 300_000), false);
  assert.equal(outsideSkew(1_000_000, 699_999, 300_000), true);
  assert.equal(outsideSkew(1_000_000, 1_300_001, 300_000), true);
});

const ca = await createCa();
const tpp = await issue(ca);
const store = new TrustStore(trustSection.parse({ anchors: [ca.pem] }));

/**
 * A scheme whose header value is its covered names and whose steps record themselves: the core's
 * order is what the test reads. `fail` names the step that throws.
 */
class Recorder extends RequestSignatureVerifier<{ names: string[] }> {
  readonly steps: string[] = [];
  fail = "";
  protected readonly scheme = {
    header: "x-test",
    certificate: "x-test-certificate",
    subject: "The test signature",
    list: "The test list",
  };
  #step(name: string) {
    this.steps.push(name);
    if (this.fail === name) throw new GatewayError(401, "SIGNATURE_INVALID", name);
  }
  protected read(value: string) {
    this.#step("read");
    return { names: value.split(" ") };
  }
  protected checkTime() {
    this.#step("time");
  }
  protected async findSigner() {
    this.#step("signer");
    return {
      signer: await store.certificate(tpp.base64, {
        label: "signing certificate",
        path: "x-test-certificate",
      }),
    };
  }
  protected algorithm(_read: unknown, _signer: CertificateInfo) {
    this.#step("algorithm");
    return { jws: "RS256", label: "the test algorithm" };
  }
  protected matches() {
    this.#step("matches");
    return Promise.resolve(this.fail !== "value");
  }
}

const request = (): SignedRequest => ({
  method: "POST",
  target: "/v1/payments/domestic",
  headers: new Headers({ digest: "d", "x-request-id": "i" }),
  now: Date.now(),
});

function recorder(fail = "") {
  const verifier = new Recorder(store, {
    coverage: { always: ["digest", "x-request-id"], whenPresent: [] },
    group: "pis",
  });
  verifier.fail = fail;
  return verifier;
}

Deno.test("RequestSignatureVerifier.verify() runs read, coverage, time, signer, the Digest callback, key and value in that order", async () => {
  const verifier = recorder();
  const seen: string[] = [];
  const signer = await verifier.verify("digest x-request-id", request(), () => {
    seen.push(verifier.steps.join(","));
    return Promise.resolve();
  });
  assert.equal(signer.organizationId, "PSDGE-NBG-123456");
  assert.deepEqual(verifier.steps, ["read", "time", "signer", "algorithm", "matches"]);
  assert.deepEqual(seen, ["read,time,signer,algorithm"]);
});

Deno.test("RequestSignatureVerifier.verify() refuses a list that misses the coverage before the time or the certificate is looked at", async () => {
  const verifier = recorder();
  await assert.rejects(verifier.verify("digest", request()), (error) => {
    assert.ok(error instanceof GatewayError);
    assert.equal(error.message, 'The test list must cover "x-request-id"');
    assert.equal(error.path, "x-test");
    return true;
  });
  assert.deepEqual(verifier.steps, ["read"]);
});

Deno.test("RequestSignatureVerifier.verify() names the scheme when the value does not verify, and runs no callback after a failed step", async () => {
  const failed = recorder("value");
  await assert.rejects(
    failed.verify("digest x-request-id", request()),
    {
      message:
        "The test signature signature value does not verify over digest, x-request-id with the signing certificate",
    },
  );
  const early = recorder("time");
  let called = false;
  await assert.rejects(
    early.verify("digest x-request-id", request(), () => Promise.resolve(void (called = true))),
    { message: "time" },
  );
  assert.equal(called, false);
  assert.deepEqual(early.steps, ["read", "time"]);
});
