/**
 * The signed POST with revocation checking (issue 20): the signed fixture's payment initiation,
 * its TPP certificate issued by an openssl CA that holds it as valid, and the CA's CRL in a file
 * the policy names (`trust.revocation: { methods: [crl], crls: [<file>] }`). The gateway reads
 * the CRL once and keeps the status until the CRL's nextUpdate (48 h here), so that on the
 * request path revocation is a cache lookup, as in front of a bank between two refreshes.
 */
import { opensslCa } from "../tests/support/openssl_ca.ts";
import { issue, yamlString } from "../tests/support/pki.ts";
import { signedPayment, type SignedPostFixture } from "../tests/support/signing.ts";

/** The fixture, and its policy with revocation `off` or `soft` (nothing else differs). */
export interface RevocationFixture {
  fixture: SignedPostFixture;
  policy(revocation: "off" | "soft"): string;
  close(): Promise<void>;
}

/**
 * An openssl CA, a TPP certificate it holds as valid, and its CRL written to a file. The policy
 * requires the transport certificate, Digest and JWS on payment initiations (as the signed row),
 * checks both certificates against the CRL when `soft`, and turns idempotency off for writes:
 * the same signed request is sent again and again, and what is compared is the revocation check
 * alone (the signed row measures idempotency).
 */
export async function revocationFixture(): Promise<RevocationFixture> {
  const ca = await opensslCa("Bench OpenSSL QTSP CA");
  const tpp = await issue(ca.ca);
  await ca.valid(tpp);
  const crlFile = await Deno.makeTempFile({ suffix: ".crl" });
  await Deno.writeFile(crlFile, await ca.crl(48));
  const fixture: SignedPostFixture = {
    ca: ca.ca,
    tpp,
    policy: "",
    request: () => signedPayment(tpp),
  };
  return {
    fixture,
    policy: (revocation) => `
upstream:
  url: \${UPSTREAM_URL}
metrics:
  token: \${METRICS_TOKEN}
trust:
  anchors: [${yamlString(ca.ca.pem)}]
  revocation: { methods: [crl], crls: [${yamlString(crlFile)}] }
defaults:
  tpp_certificate: { form: nginx, required: true, revocation: ${revocation} }
  rate_limit: { limits: { per_tpp: { key: [tpp], limit: 1000000000, window: 1m } } }
  idempotency: { writes: none }
groups:
  pis:
    digest: { required: true }
    jws_signature: { required: true, revocation: ${revocation} }
`,
    async close() {
      await ca.close();
      await Deno.remove(crlFile).catch(() => {});
    },
  };
}
