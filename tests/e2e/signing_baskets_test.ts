/**
 * Signing baskets end to end, through the gateway (the default policy, TPPs known by their bearer
 * tokens) and the sandbox bank: two payments put in one basket and authorised with one embedded
 * SCA, both payments moved; another TPP's payment refused at the edge; the group switched off.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { serveSandbox } from "../../src/sandbox/serve.ts";
import { DEFAULT_POLICY, startGateway, type TestGateway } from "../support/gateway.ts";
import { buildPolicy, type PolicyInput } from "../support/policies.ts";
import { tokenIssuer } from "../support/tpp_tokens.ts";
import { PAYMENT } from "./bank.ts";
import { assertPublicLinks, call, PSU_IP } from "./flow.ts";

const issuer = await tokenIssuer();
const EMBEDDED = { "tpp-redirect-preferred": "false", "psu-id": "PSU-BASKET" };

/** The default policy with TPPs identified by bearer tokens, `over` over it. */
function policyWith(over: PolicyInput = {}): PolicyInput {
  return buildPolicy(parse(DEFAULT_POLICY) as PolicyInput, {
    defaults: { bearer_token: issuer.options },
  }, over);
}

/** A sandbox bank and a gateway before it; both stopped on dispose. */
async function bankWith(over: PolicyInput = {}) {
  const sandbox = serveSandbox(0, { decoupledDelayMs: 300 });
  const gateway = await startGateway({ upstream: sandbox.url, policy: policyWith(over) });
  return {
    gateway,
    async [Symbol.asyncDispose]() {
      await gateway.close();
      await sandbox.server.shutdown();
    },
  };
}

async function as(tpp: string, headers: Record<string, string> = {}) {
  return { ...await issuer.headers(tpp), ...headers };
}

async function pay(gateway: TestGateway, tpp: string): Promise<string> {
  const made = await call(gateway, "POST", "/v1/payments/domestic", {
    body: PAYMENT,
    headers: await as(tpp, { "psu-ip-address": PSU_IP, "psu-id": "PSU-BASKET" }),
  });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  return made.body.paymentId;
}

async function basket(gateway: TestGateway, tpp: string, paymentIds: string[]) {
  return call(gateway, "POST", "/v1/signing-baskets", {
    body: { paymentIds },
    headers: await as(tpp, { "psu-ip-address": PSU_IP }),
  });
}

async function statusOf(gateway: TestGateway, tpp: string, id: string): Promise<string> {
  const read = await call(gateway, "GET", `/v1/payments/domestic/${id}/status`, {
    headers: await as(tpp),
  });
  return read.body.transactionStatus;
}

Deno.test("e2e signing basket: two payments authorised with one embedded SCA, both ACCP", async () => {
  await using bank = await bankWith();
  const { gateway } = bank;
  const ids = [await pay(gateway, "tpp-a"), await pay(gateway, "tpp-a")];
  const made = await basket(gateway, "tpp-a", ids);
  assert.equal(made.status, 201, JSON.stringify(made.body));
  assertPublicLinks(made.body);
  const href = made.body._links.startAuthorisation.href;
  assert.equal(made.headers.get("location"), `/v1/signing-baskets/${made.body.basketId}`);

  const started = await call(gateway, "POST", href, {
    body: { psuData: { password: "sandbox" } },
    headers: await as("tpp-a", EMBEDDED),
  });
  assert.equal(started.status, 201, JSON.stringify(started.body));
  assert.equal(started.headers.get("aspsp-sca-approach"), "EMBEDDED");
  assert.equal(started.body.scaStatus, "psuAuthenticated");
  const auth = started.body._links.selectAuthenticationMethod.href;
  const selected = await call(gateway, "PUT", auth, {
    body: { authenticationMethodId: "sms-otp" },
    headers: await as("tpp-a", EMBEDDED),
  });
  assert.equal(selected.body.scaStatus, "scaMethodSelected");
  assert.deepEqual(
    [await statusOf(gateway, "tpp-a", ids[0]), await statusOf(gateway, "tpp-a", ids[1])],
    ["RCVD", "RCVD"],
  );
  const done = await call(gateway, "PUT", auth, {
    body: { scaAuthenticationData: "123456" },
    headers: await as("tpp-a", EMBEDDED),
  });
  assert.equal(done.status, 200, JSON.stringify(done.body));
  assert.equal(done.body.scaStatus, "finalised");
  assert.deepEqual(
    [await statusOf(gateway, "tpp-a", ids[0]), await statusOf(gateway, "tpp-a", ids[1])],
    ["ACCP", "ACCP"],
  );
  const status = await call(gateway, "GET", `/v1/signing-baskets/${made.body.basketId}/status`, {
    headers: await as("tpp-a"),
  });
  assert.deepEqual(status.body, { transactionStatus: "ACTC" });
});

Deno.test("e2e signing basket: another TPP's payment, and another TPP's basket, are refused at the edge", async () => {
  await using bank = await bankWith();
  const { gateway } = bank;
  const theirs = await pay(gateway, "tpp-a");
  const stolen = await basket(gateway, "tpp-b", [await pay(gateway, "tpp-b"), theirs]);
  assert.equal(stolen.status, 400);
  assert.deepEqual(stolen.body.tppMessages[0], {
    category: "ERROR",
    code: "RESOURCE_UNKNOWN",
    path: "paymentIds[1]",
    // The gateway's text (the bank's own says only that the payment is unknown).
    text: `Payment "${theirs}" is unknown to this TPP`,
  });
  const own = await basket(gateway, "tpp-a", [theirs]);
  assert.equal(own.status, 201);
  const read = await call(gateway, "GET", `/v1/signing-baskets/${own.body.basketId}`, {
    headers: await as("tpp-b"),
  });
  assert.equal(read.status, 403);
  assert.equal(read.body.tppMessages[0].code, "RESOURCE_UNKNOWN");
});

Deno.test("e2e signing basket: the group switched off answers 405 SERVICE_INVALID", async () => {
  await using bank = await bankWith({ groups: { baskets: { service: { offered: false } } } });
  const id = await pay(bank.gateway, "tpp-a");
  const refused = await basket(bank.gateway, "tpp-a", [id]);
  assert.equal(refused.status, 405);
  assert.equal(refused.body.tppMessages[0].code, "SERVICE_INVALID");
  const read = await call(bank.gateway, "GET", "/v1/signing-baskets/b-1/status", {
    headers: await as("tpp-a"),
  });
  assert.equal(read.status, 405);
});
