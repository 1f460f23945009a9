import { assertForwarded, assertRejected, policy, rig } from "../support/hardening.ts";
import { initiationHeaders, singlePayment } from "../support/requests.ts";
import { createCa, issue } from "../support/pki.ts";
import { signHttpSignature, signJws } from "../support/signing.ts";
import { digestOf } from "../../src/signing/digest.ts";
import assert from "node:assert/strict";
import { Hono } from "hono";
import { signaturePairing } from "../../middleware/signature_pairing.ts";
import { buildContext } from "../support/sections.ts";
import { operation } from "../../src/psd2/catalogue.ts";
import type { GatewayEnv } from "../../src/core/check.ts";
import { GatewayError } from "../../src/psd2/errors.ts";

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

/**
 * The pairing check built for initiatePayment with only `headers` of its signing headers taken:
 * undefined when it builds none, else the code it answers for each request header set.
 */
function pairing(taken: string[]) {
  const signing = ["digest", "x-jws-signature", "signature"];
  const base = operation("initiatePayment");
  const op = {
    ...base,
    headers: [...base.headers.filter((h) => !signing.includes(h)), ...taken],
  };
  const check = signaturePairing.create(
    signaturePairing.options.parse({}),
    buildContext(op),
  );
  if (!check) return undefined;
  return async (headers: Record<string, string>) => {
    const app = new Hono<GatewayEnv>();
    let code = "passed";
    app.get("/", async (c, next) => {
      try {
        await check(c, next);
      } catch (error) {
        if (!(error instanceof GatewayError)) throw error;
        code = error.code;
        return c.text("refused", 400);
      }
    }, (c) => c.text("ok"));
    await app.request("/", { headers });
    return code;
  };
}

Deno.test("signaturePairing() pairs Digest only with the signature headers the operation takes", async () => {
  // Every operation of the catalogue takes the three together; the rule must not rely on it.
  assert.equal(pairing(["digest"]), undefined);
  assert.equal(pairing(["x-jws-signature", "signature"]), undefined);
  const jwsOnly = pairing(["digest", "x-jws-signature"])!;
  // A Signature header the operation does not take signs nothing here.
  assert.equal(await jwsOnly({ digest: DIGEST, signature: "sig" }), "SIGNATURE_MISSING");
  assert.equal(await jwsOnly({ digest: DIGEST, "x-jws-signature": "a..b" }), "passed");
  assert.equal(await jwsOnly({ "x-jws-signature": "a..b" }), "FORMAT_ERROR");
});
