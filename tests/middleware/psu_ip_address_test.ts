import { buildContext, TEST_SECTIONS } from "../support/sections.ts";
import assert from "node:assert/strict";
import { Hono } from "hono";
import { assertForwarded, assertRejected, policy, rig } from "../support/hardening.ts";
import { initiationHeaders, REQUEST_ID, singlePayment } from "../support/requests.ts";
import { psuIpAddress } from "../../middleware/psu_ip_address.ts";
import { operation } from "../../src/psd2/catalogue.ts";
import type { GatewayEnv } from "../../src/core/check.ts";
import { defaultServices } from "../../src/policy/services.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import { GatewayError } from "../../src/psd2/errors.ts";

const PAYMENT = JSON.stringify(singlePayment());

function initiate(headers: Record<string, string>) {
  return { method: "POST", headers, body: PAYMENT };
}

Deno.test("psuIpAddress() rejects payment initiation and consent creation without it", async () => {
  await using t = await rig(policy());
  const { "psu-ip-address": _, ...headers } = initiationHeaders();
  for (const path of ["/v1/payments/domestic", "/v1/consents"]) {
    assertRejected(await t.call(path, initiate(headers)), {
      status: 400,
      code: "FORMAT_ERROR",
      path: "PSU-IP-Address",
      text: /^Header "PSU-IP-Address" is required/,
    }, t.upstream);
  }
});

Deno.test("psuIpAddress() rejects malformed IPv4 addresses", async () => {
  await using t = await rig(policy());
  for (const bad of ["256.1.1.1", "1.2.3", "01.2.3.4", "localhost", "1.2.3.4:80"]) {
    const outcome = await t.call(
      "/v1/payments/domestic",
      initiate(initiationHeaders({ "psu-ip-address": bad })),
    );
    assertRejected(outcome, {
      status: 400,
      code: "FORMAT_ERROR",
      path: "PSU-IP-Address",
      text: /must be an IPv4 or IPv6 address/,
    }, t.upstream);
  }
});

Deno.test("psuIpAddress() accepts IPv6 by default and refuses it when the policy says IPv4", async () => {
  {
    await using t = await rig(policy({ psu_ip_address: { allow_ipv6: false } }));
    const outcome = await t.call(
      "/v1/payments/domestic",
      initiate(initiationHeaders({ "psu-ip-address": "2001:db8::1" })),
    );
    assertRejected(
      outcome,
      { status: 400, code: "FORMAT_ERROR", path: "PSU-IP-Address", text: /an IPv4 address,/ },
      t.upstream,
    );
  }
  await using t = await rig(policy());
  for (const good of ["2001:db8::1", "::ffff:192.0.2.1", "192.0.2.1"]) {
    const outcome = await t.call(
      "/v1/payments/domestic",
      initiate(initiationHeaders({ "psu-ip-address": good })),
    );
    assert.equal(outcome.status, 200, good);
  }
  const outcome = await t.call(
    "/v1/payments/domestic",
    initiate(initiationHeaders({ "psu-ip-address": "2001:db8::1%eth0" })),
  );
  assert.equal(outcome.status, 400);
});

Deno.test("psuIpAddress() is optional on account reads but checked when sent", async () => {
  await using t = await rig(policy());
  const headers = { "x-request-id": REQUEST_ID, "consent-id": "c-1" };
  assertForwarded(await t.call("/v1/accounts", { headers }), t.upstream);
  assertForwarded(
    await t.call("/v1/accounts", { headers: { ...headers, "psu-ip-address": "10.0.0.1" } }),
    t.upstream,
    2,
  );
  assertRejected(
    await t.call("/v1/accounts", { headers: { ...headers, "psu-ip-address": "10.0.0" } }),
    { status: 400, code: "FORMAT_ERROR", path: "PSU-IP-Address" },
    t.upstream,
    2,
  );
});

/** Runs the check on getAccountList with a probe after it that reports c.var.psuInitiated. */
async function psuInitiated(
  header: string | undefined,
  mode: "enforce" | "report",
  extra: Record<string, unknown> = {},
) {
  const op = operation("getAccountList");
  const options = psuIpAddress.options.parse({ mode, ...extra });
  const check = psuIpAddress.create(options, {
    operation: op,
    services: defaultServices({ log: memoryLogger() }),
    sections: TEST_SECTIONS,
    decisions: {},
    report: () => {},
  })!;
  const app = new Hono<GatewayEnv>();
  app.get("/", async (c, next) => {
    // What the app's entry sets before any check: presence of a syntactically valid address.
    c.set("psuInitiated", header !== undefined);
    try {
      await check(c, next);
    } catch (error) {
      if (!(error instanceof GatewayError) || mode === "enforce") throw error;
      await next();
    }
  }, (c) => c.json({ psuInitiated: c.var.psuInitiated }));
  const response = await app.request("/", {
    headers: header === undefined ? {} : { "psu-ip-address": header },
  });
  return response.status === 200 ? (await response.json()).psuInitiated : response.status;
}

Deno.test("psuIpAddress() marks a read PSU-initiated only for a present and valid address", async () => {
  assert.equal(await psuInitiated("192.168.0.7", "enforce"), true);
  assert.equal(await psuInitiated(undefined, "enforce"), false);
  assert.equal(await psuInitiated("2001:db8::1", "report", { allow_ipv6: false }), false);
  assert.equal(await psuInitiated("2001:db8::1", "enforce"), true);
  assert.equal(await psuInitiated("not-an-ip", "report"), false);
});

Deno.test("psuIpAddress() with public_only names the range of a refused address and takes a public one", async () => {
  await using t = await rig(policy({ psu_ip_address: { public_only: true, allow_ipv6: true } }));
  const outcome = await t.call(
    "/v1/payments/domestic",
    initiate(initiationHeaders({ "psu-ip-address": "10.1.2.3" })),
  );
  assertRejected(outcome, {
    status: 400,
    code: "FORMAT_ERROR",
    path: "PSU-IP-Address",
    text:
      /^Header "PSU-IP-Address" must be the PSU's public address; "10\.1\.2\.3" is in a private range$/,
  }, t.upstream);
  const malformed = await t.call(
    "/v1/payments/domestic",
    initiate(initiationHeaders({ "psu-ip-address": "10.1.2" })),
  );
  assert.equal(
    malformed.text,
    'Header "PSU-IP-Address" must be an IPv4 or IPv6 address, like 192.168.8.78',
  );
  for (const [i, good] of ["81.95.1.1", "2a00:1450:4001::1"].entries()) {
    assertForwarded(
      await t.call(
        "/v1/payments/domestic",
        initiate(initiationHeaders({ "psu-ip-address": good })),
      ),
      t.upstream,
      i + 1,
    );
  }
});

Deno.test("psuIpAddress() without public_only takes private addresses and says IPv4 in its text", async () => {
  await using t = await rig(policy({ psu_ip_address: { allow_ipv6: false } }));
  assertForwarded(
    await t.call(
      "/v1/payments/domestic",
      initiate(initiationHeaders({ "psu-ip-address": "10.1.2.3" })),
    ),
    t.upstream,
  );
  const malformed = await t.call(
    "/v1/payments/domestic",
    initiate(initiationHeaders({ "psu-ip-address": "10.1.2" })),
  );
  assert.equal(
    malformed.text,
    'Header "PSU-IP-Address" must be an IPv4 address, like 192.168.8.78',
  );
});

Deno.test("psuIpAddress() with public_only marks a read from a private address TPP-initiated", async () => {
  assert.equal(await psuInitiated("10.0.0.1", "report", { public_only: true }), false);
  assert.equal(await psuInitiated("81.95.1.1", "report", { public_only: true }), true);
  assert.equal(await psuInitiated("10.0.0.1", "report"), true);
});

Deno.test("psuIpAddress() builds nothing for an operation that neither takes nor requires it", () => {
  const build = (headers: string[], required: string[]) =>
    psuIpAddress.create(
      psuIpAddress.options.parse({}),
      buildContext({ ...operation("getAccountList"), headers, required }),
    );
  assert.equal(build([], []), undefined);
  assert.notEqual(build(["psu-ip-address"], []), undefined);
  assert.notEqual(build([], ["psu-ip-address"]), undefined);
});
