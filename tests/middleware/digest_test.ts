import assert from "node:assert/strict";
// In-process through the app's fetch (the upstream is still real HTTP); see tests/support/gateway.ts.
import { gatewayApp as startGateway } from "../support/gateway.ts";
import { startUpstream } from "../support/upstream.ts";
import { createCa, issue } from "../support/pki.ts";
import { buildPolicy, type LevelInput, type PolicyInput } from "../support/policies.ts";
import { initiationHeaders, singlePayment } from "../support/requests.ts";
import { signJws } from "../support/signing.ts";
import { digestOf } from "../../src/signing/digest.ts";
import { Hono } from "hono";
import { digest } from "../../middleware/digest.ts";
import { buildContext } from "../support/sections.ts";
import { operation } from "../../src/psd2/catalogue.ts";
import type { GatewayEnv } from "../../src/core/check.ts";

const BODY = JSON.stringify(singlePayment());
const bytes = new TextEncoder().encode(BODY);
const PAYMENT = "/v1/payments/domestic";
/** Starting an authorisation takes an empty body. */
const AUTHORISATIONS = "/v1/payments/domestic/p-1/authorisations";
const ca = await createCa();
const tpp = await issue(ca);

function policy(digest: LevelInput["digest"] = {}) {
  return buildPolicy({ trust: { anchors: [ca.pem] }, defaults: { digest } });
}

/**
 * Posts a valid payment initiation (or `body` to `path`). A Digest goes with a detached JWS over
 * it, as signature_pairing requires; the JWS is valid, so the digest check is the one that decides.
 */
async function post(
  digest: string | undefined,
  options: { body?: string; policy?: PolicyInput; path?: string } = {},
) {
  await using upstream = startUpstream(() => Response.json({ ok: true }, { status: 201 }));
  await using gateway = await startGateway({
    policy: options.policy ?? policy(),
    upstream: upstream.url,
  });
  const path = options.path ?? PAYMENT;
  let headers = initiationHeaders({ "x-request-id": crypto.randomUUID() });
  if (digest !== undefined) {
    headers = await signJws(tpp, { method: "POST", target: path, headers: { ...headers, digest } });
  }
  const response = await gateway.fetch(path, {
    method: "POST",
    headers,
    body: options.body ?? BODY,
  });
  return { response, body: await response.json(), reached: upstream.received.length };
}

async function rejected(digest: string | undefined, text: RegExp, options = {}) {
  const { response, body, reached } = await post(digest, options);
  assert.equal(response.status, 400);
  assert.deepEqual(
    { code: body.tppMessages[0].code, path: body.tppMessages[0].path },
    { code: "FORMAT_ERROR", path: "Digest" },
  );
  assert.match(body.tppMessages[0].text, text);
  assert.equal(reached, 0);
}

Deno.test("digest() accepts SHA-256 and SHA-512 of the exact body bytes", async () => {
  assert.equal((await post(await digestOf(bytes))).response.status, 201);
  assert.equal((await post(await digestOf(bytes, "SHA-512"))).response.status, 201);
  assert.equal(
    (await post((await digestOf(bytes)).replace("SHA-256", "sha-256"))).response.status,
    201,
  );
});

Deno.test("digest() takes the hash of nothing for an empty body", async () => {
  const empty = await digestOf(new Uint8Array(0));
  assert.equal(empty, "SHA-256=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
  assert.equal((await post(empty, { body: "", path: AUTHORISATIONS })).response.status, 201);
});

Deno.test("digest() rejects a value that does not match the body", async () => {
  await rejected(await digestOf(bytes), /does not match the request body \(SHA-256\)/, {
    body: BODY.replace("123.50", "100.00"),
  });
});

Deno.test("digest() rejects an unknown algorithm", async () => {
  await rejected(
    "MD5=rL0Y20zC+Fzt72VPzMSk2A==",
    /unsupported algorithm "MD5"; supported: SHA-256, SHA-512/,
  );
  await rejected(await digestOf(bytes, "SHA-512"), /unsupported algorithm "SHA-512"/, {
    policy: policy({ algorithms: ["SHA-256"] }),
  });
});

Deno.test("digest() rejects a malformed header", async () => {
  await rejected("SHA-256", /must look like SHA-256=<base64>/);
  await rejected("SHA-256=not base64!", /must look like SHA-256=<base64>/);
});

Deno.test("digest() requires the header where the policy says, and passes without it elsewhere", async () => {
  await rejected(undefined, /is required for this operation/, {
    policy: policy({ required: true }),
  });
  assert.equal((await post(undefined)).response.status, 201);
});

Deno.test("digest() marks a matching Digest as checked, so that a signature check does not hash the body again", async () => {
  // The mark is what the signature checks read (requireMatchingDigest) to skip their own hash.
  const check = digest.create(
    digest.options.parse({}),
    buildContext(operation("initiatePayment")),
  )!;
  const app = new Hono<GatewayEnv>();
  let marked: unknown = "not reached";
  app.post("/", (c, next) => {
    c.set("body", bytes);
    return check(c, next);
  }, (c) => {
    marked = c.get("digestVerified");
    return c.text("ok");
  });
  const response = await app.request("/", {
    method: "POST",
    headers: { digest: await digestOf(bytes) },
    body: BODY,
  });
  assert.equal(response.status, 200);
  assert.equal(marked, true);
});
