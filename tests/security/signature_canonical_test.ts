/**
 * A request signature whose value is not the canonical integer: the TPP's PSS signature s sent as
 * s + n, the same length when it fits. RFC 8017 (8.1.2, step 2b) has every value at or above the
 * modulus invalid. This runtime's WebCrypto accepted it for RSA-PSS, so anyone on the way could
 * make a second, byte-different valid signature of a TPP's request; the gateway's own RSA
 * verification (src/signing/rsa.ts) refuses it and the core never sees the request.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { startGateway } from "../support/gateway.ts";
import { startUpstream } from "../support/upstream.ts";
import { createCa, issue, type Issued } from "../support/pki.ts";
import { buildPolicy } from "../support/policies.ts";
import { initiationHeaders } from "../support/requests.ts";
import { PAYMENT_BODY, PAYMENT_TARGET, signJws } from "../support/signing.ts";

const ca = await createCa("Canonical Signatures Test CA");
const LENGTH = 256;
const TOP = 1n << BigInt(8 * LENGTH);

const integer = (bytes: Uint8Array) => BigInt("0x" + Buffer.from(bytes).toString("hex"));

async function modulusOf(tpp: Issued): Promise<bigint> {
  const { n } = await crypto.subtle.exportKey("jwk", tpp.keys.publicKey);
  return integer(Buffer.from(n!, "base64url"));
}

/** A TPP whose modulus leaves room for s + n in 256 bytes for a good share of signatures. */
async function roomyTpp(): Promise<{ tpp: Issued; n: bigint }> {
  for (let tries = 0; tries < 40; tries++) {
    const tpp = await issue(ca);
    const n = await modulusOf(tpp);
    if (n < TOP * 3n / 4n) return { tpp, n };
  }
  throw new Error("No key of the 40 left room for s + n");
}

/** The signed headers of a payment whose PSS signature s leaves s + n within 256 bytes. */
async function signedWithRoom(tpp: Issued, n: bigint) {
  for (let tries = 0; tries < 100; tries++) {
    const headers = await signJws(tpp, {
      method: "POST",
      target: PAYMENT_TARGET,
      headers: initiationHeaders({ "x-request-id": crypto.randomUUID() }),
      body: PAYMENT_BODY,
    }, { alg: "PS256" });
    const [protectedPart, signature] = headers["x-jws-signature"].split("..");
    const s = integer(Buffer.from(signature, "base64url"));
    if (s + n < TOP) {
      const plus = Buffer.from((s + n).toString(16).padStart(2 * LENGTH, "0"), "hex");
      return { headers, altered: `${protectedPart}..${plus.toString("base64url")}` };
    }
  }
  throw new Error("No signature of the 100 left room for s + n");
}

Deno.test("jws_signature refuses a PSS signature sent as s + n, which verifies as s would", async () => {
  const { tpp, n } = await roomyTpp();
  const { headers, altered } = await signedWithRoom(tpp, n);
  await using upstream = startUpstream(() => Response.json({ paymentId: "p-1" }, { status: 201 }));
  await using gateway = await startGateway({
    policy: buildPolicy({
      trust: { anchors: [ca.pem] },
      defaults: { jws_signature: { required: true } },
    }),
    upstream: upstream.url,
  });
  const send = (value: string) =>
    gateway.fetch(PAYMENT_TARGET, {
      method: "POST",
      headers: { ...headers, "x-jws-signature": value },
      body: PAYMENT_BODY,
    });

  const refused = await send(altered);
  const body = await refused.json();
  assert.equal(refused.status, 401);
  assert.equal(body.tppMessages[0].code, "SIGNATURE_INVALID");
  assert.equal(body.tppMessages[0].path, "x-jws-signature");
  assert.equal(upstream.received.length, 0);

  const accepted = await send(headers["x-jws-signature"]);
  await accepted.body?.cancel();
  assert.equal(accepted.status, 201);
  assert.equal(upstream.received.length, 1);
});
