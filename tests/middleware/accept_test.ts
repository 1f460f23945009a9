import assert from "node:assert/strict";
import { Hono } from "hono";
import { accept } from "../../middleware/accept.ts";
import { operation } from "../../src/psd2/catalogue.ts";
import type { GatewayEnv } from "../../src/core/check.ts";
import { buildContext } from "../support/sections.ts";
import { assertForwarded, assertRejected, policy, rig } from "../support/hardening.ts";
import { REQUEST_ID } from "../support/requests.ts";

const READ = { "x-request-id": REQUEST_ID, "consent-id": "c-1" };

Deno.test("accept() rejects an Accept the operation cannot satisfy with 406", async () => {
  await using t = await rig(policy());
  for (
    const accept of ["text/html", "application/xml", "application/json;q=0", "image/*", "nonsense"]
  ) {
    assertRejected(await t.call("/v1/accounts", { headers: { ...READ, accept } }), {
      status: 406,
      code: "REQUESTED_FORMATS_INVALID",
      path: "Accept",
      text: /must allow "application\/json"/,
    }, t.upstream);
  }
});

Deno.test("accept() lets through Accept values that allow JSON", async () => {
  await using t = await rig(policy());
  const values = [
    "application/json",
    "*/*",
    "application/*",
    "text/html, application/json;q=0.5",
    "APPLICATION/JSON; charset=utf-8",
  ];
  for (const [i, accept] of values.entries()) {
    assertForwarded(
      await t.call("/v1/accounts", { headers: { ...READ, accept } }),
      t.upstream,
      i + 1,
    );
  }
});

Deno.test("accept() allows XML when reading a pain.001 payment", async () => {
  await using t = await rig(
    policy({ path_params: { offered_products: ["domestic", "pain.001-sepa-credit-transfers"] } }),
  );
  const headers = { "x-request-id": REQUEST_ID, accept: "application/xml" };
  assertForwarded(
    await t.call("/v1/payments/pain.001-sepa-credit-transfers/p-1", { headers }),
    t.upstream,
  );
  assertRejected(
    await t.call("/v1/payments/domestic/p-1", { headers }),
    {
      status: 406,
      code: "REQUESTED_FORMATS_INVALID",
    },
    t.upstream,
    1,
  );
});

Deno.test("accept() names JSON and XML in its text when reading a pain.001 payment", async () => {
  await using t = await rig(
    policy({ path_params: { offered_products: ["domestic", "pain.001-sepa-credit-transfers"] } }),
  );
  const headers = { "x-request-id": REQUEST_ID, accept: "text/html" };
  assertRejected(await t.call("/v1/payments/pain.001-sepa-credit-transfers/p-1", { headers }), {
    status: 406,
    code: "REQUESTED_FORMATS_INVALID",
    path: "Accept",
    text: /^Header "Accept" must allow "application\/json" or "application\/xml"$/,
  }, t.upstream);
  // XML is for reading a pain.001 payment only, not for its status.
  assertRejected(
    await t.call("/v1/payments/pain.001-sepa-credit-transfers/p-1/status", {
      headers: { ...headers, accept: "application/xml" },
    }),
    {
      status: 406,
      code: "REQUESTED_FORMATS_INVALID",
      text: /^Header "Accept" must allow "application\/json"$/,
    },
    t.upstream,
  );
});

Deno.test("accept() lets a request without Accept through (fetch() would always send one)", async () => {
  const made = accept.create(
    accept.options.parse({}),
    buildContext(operation("getAccountList")),
  )!;
  const check = typeof made === "function" ? made : made.request!;
  const app = new Hono<GatewayEnv>();
  app.get("/", (c, next) => check(c, next), (c) => c.text("passed"));
  const request = new Request("http://gateway.test/");
  assert.equal(request.headers.has("accept"), false);
  const response = await app.request(request);
  assert.equal(response.status, 200);
  assert.equal(await response.text(), "passed");
});

Deno.test("accept() takes any of several media types the policy lists", async () => {
  await using t = await rig(
    policy({ accept: { media_types: ["application/json", "application/hal+json"] } }),
  );
  assertForwarded(
    await t.call("/v1/accounts", { headers: { ...READ, accept: "application/hal+json" } }),
    t.upstream,
  );
  assertRejected(
    await t.call("/v1/accounts", { headers: { ...READ, accept: "text/html" } }),
    {
      status: 406,
      code: "REQUESTED_FORMATS_INVALID",
      text: /^Header "Accept" must allow "application\/json" or "application\/hal\+json"$/,
    },
    t.upstream,
    1,
  );
});
