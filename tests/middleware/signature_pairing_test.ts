import { assertForwarded, assertRejected, policy, rig } from "../support/hardening.ts";
import { initiationHeaders, singlePayment } from "../support/requests.ts";

const DIGEST = "SHA-256=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=";

function initiate(extra: Record<string, string>) {
  return {
    method: "POST",
    headers: initiationHeaders(extra),
    body: JSON.stringify(singlePayment()),
  };
}

Deno.test("signaturePairing() rejects a Digest without a signature header", async () => {
  await using t = await rig(policy());
  assertRejected(await t.call("/v1/payments/domestic", initiate({ digest: DIGEST })), {
    status: 401,
    code: "SIGNATURE_MISSING",
    text: /without a signature header/,
  }, t.upstream);
});

Deno.test("signaturePairing() rejects a signature header without Digest", async () => {
  await using t = await rig(policy());
  for (const name of ["x-jws-signature", "signature"]) {
    assertRejected(
      await t.call("/v1/payments/domestic", initiate({ [name]: "eyJhbGciOiJQUzI1NiJ9..c2ln" })),
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
  await using t = await rig(policy());
  assertForwarded(await t.call("/v1/payments/domestic", initiate({})), t.upstream);
  assertForwarded(
    await t.call("/v1/payments/domestic", initiate({ digest: DIGEST, "x-jws-signature": "a..b" })),
    t.upstream,
    2,
  );
  assertForwarded(
    await t.call("/v1/payments/domestic", initiate({ digest: DIGEST, signature: 'keyId="x"' })),
    t.upstream,
    3,
  );
});
