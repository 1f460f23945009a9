import { assertForwarded, assertRejected, policy, rig } from "../support/hardening.ts";
import { initiationHeaders, singlePayment } from "../support/requests.ts";
import { createCa, issue } from "../support/pki.ts";
import { signHttpSignature, signJws } from "../support/signing.ts";
import { digestOf } from "../../src/signing/digest.ts";

const PATH = "/v1/payments/domestic";
const BODY = JSON.stringify(singlePayment());
/** The Digest of the body sent: correct, so that only the pairing is wrong. */
const DIGEST = await digestOf(new TextEncoder().encode(BODY));
const ca = await createCa();
const tpp = await issue(ca);
/** Trusts the test CA, so that the signatures of the forwarded requests verify. */
const POLICY = policy({}, { trust: { anchors: [ca.pem] } });

function initiate(headers: Record<string, string>) {
  return { method: "POST", headers, body: BODY };
}

/** Headers of a payment initiation signed both ways (JWS, HTTP Signature); Digest included. */
async function signed(): Promise<Record<string, Record<string, string>>> {
  const input = { method: "POST", target: PATH, headers: initiationHeaders(), body: BODY };
  return {
    "x-jws-signature": await signJws(tpp, input),
    signature: await signHttpSignature(tpp, input),
  };
}

Deno.test("signaturePairing() rejects a Digest without a signature header", async () => {
  await using t = await rig(POLICY);
  assertRejected(await t.call(PATH, initiate(initiationHeaders({ digest: DIGEST }))), {
    status: 401,
    code: "SIGNATURE_MISSING",
    path: "x-jws-signature",
    text: /without a signature header/,
  }, t.upstream);
});

Deno.test("signaturePairing() leaves operations that take no Digest alone", async () => {
  // The product catalogue takes neither Digest nor a signature: a Digest there is not judged.
  await using t = await rig(POLICY);
  const empty = await digestOf(new Uint8Array());
  assertForwarded(await t.call("/v1/products/en", { headers: { digest: empty } }), t.upstream);
});

Deno.test("signaturePairing() rejects a signature header without Digest", async () => {
  await using t = await rig(POLICY);
  for (const [name, headers] of Object.entries(await signed())) {
    // A valid signature whose Digest was left out.
    const { digest: _, ...withoutDigest } = headers;
    assertRejected(
      await t.call(PATH, initiate(withoutDigest)),
      {
        status: 400,
        code: "FORMAT_ERROR",
        path: "Digest",
        text: /must be sent with the signature header/,
      },
      t.upstream,
    );
    assertRejected(
      await t.call(PATH, initiate(initiationHeaders({ [name]: "eyJhbGciOiJQUzI1NiJ9..c2ln" }))),
      {
        status: 400,
        code: "FORMAT_ERROR",
        path: "Digest",
        text: /must be sent with the signature header/,
      },
      t.upstream,
    );
  }
});

Deno.test("signaturePairing() forwards Digest with either signature header, and neither", async () => {
  await using t = await rig(POLICY);
  const { "x-jws-signature": jws, signature } = await signed();
  assertForwarded(await t.call(PATH, initiate(initiationHeaders())), t.upstream);
  assertForwarded(await t.call(PATH, initiate(jws)), t.upstream, 2);
  assertForwarded(await t.call(PATH, initiate(signature)), t.upstream, 3);
});
