/**
 * The confirmation of funds end to end: a TPP's `POST /v1/funds-confirmations` through the real
 * gateway to the sandbox bank, which answers from its accounts' balances. The funds are there or
 * not, a bad body stops at the gateway, the bank's policy can require a consent, switch the
 * service off, and (with certificates from the sandbox CA) admit only a TPP with the role PSP_IC.
 */
import assert from "node:assert/strict";
import { makeTestCa } from "../../src/cli/test_ca.ts";
import { issueTppCertificate, loadSandboxCa } from "../../src/pki/sandbox_ca.ts";
import type { RoleName } from "../../src/pki/qc_names.ts";
import { serveSandbox } from "../../src/sandbox/serve.ts";
import { FUNDS_TEST_ACCOUNTS } from "../../src/sandbox/test_users.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { policy } from "../support/hardening.ts";
import type { PolicyInput } from "../support/policies.ts";
import { fundsBody } from "../support/funds.ts";
import { call } from "./flow.ts";

const PATH = "/v1/funds-confirmations";
const [FUNDED, EMPTY] = FUNDS_TEST_ACCOUNTS;

/** The gateway with this policy over the defaults in front of a fresh sandbox bank. */
async function fundsBank(...parts: PolicyInput[]) {
  const sandbox = serveSandbox(0);
  const gateway = await startGateway({ upstream: sandbox.url, policy: policy({}, ...parts) });
  return {
    gateway,
    /** What reached the bank's funds check. */
    async checks(): Promise<number> {
      const log = await fetch(`${sandbox.url}/sandbox/requests?limit=50`);
      const { requests } = await log.json();
      return requests.filter((r: { target: string }) => r.target.endsWith("/funds-confirmations"))
        .length;
    },
    async [Symbol.asyncDispose]() {
      await gateway.close();
      await sandbox.server.shutdown();
    },
  };
}

function check(gateway: TestGateway, body: unknown, headers: Record<string, string> = {}) {
  return call(gateway, "POST", PATH, { body, headers });
}

Deno.test("a confirmation of funds answers fundsAvailable from the account's balance", async () => {
  await using bank = await fundsBank();
  const funded = await check(bank.gateway, fundsBody("2391.25", { iban: FUNDED.iban }));
  assert.equal(funded.status, 200, JSON.stringify(funded.body));
  assert.deepEqual(funded.body, { fundsAvailable: true });
  const over = await check(bank.gateway, fundsBody("2391.26", { iban: FUNDED.iban }));
  assert.deepEqual(over.body, { fundsAvailable: false });
  const empty = await check(bank.gateway, fundsBody("1.00", { iban: EMPTY.iban }));
  assert.equal(empty.status, 200, JSON.stringify(empty.body));
  assert.deepEqual(empty.body, { fundsAvailable: false });
  assert.equal(await bank.checks(), 3);
});

Deno.test("a confirmation of funds with a bad body is 400 FORMAT_ERROR at the gateway", async () => {
  await using bank = await fundsBank();
  const body = { ...fundsBody(), instructedAmount: { currency: "GEL", amount: "12,50" } };
  const bad = await check(bank.gateway, body);
  assert.equal(bad.status, 400, JSON.stringify(bad.body));
  assert.equal(bad.body.tppMessages[0].code, "FORMAT_ERROR");
  assert.equal(bad.body.tppMessages[0].path, "instructedAmount.amount");
  assert.equal(await bank.checks(), 0, "the bank saw the bad body");
});

Deno.test("a bank on the PIIS consent model refuses a confirmation of funds without Consent-ID", async () => {
  await using bank = await fundsBank({ groups: { piis: { consent_id: { required: true } } } });
  const missing = await check(bank.gateway, fundsBody());
  assert.equal(missing.status, 400, JSON.stringify(missing.body));
  assert.equal(missing.body.tppMessages[0].code, "FORMAT_ERROR");
  assert.equal(missing.body.tppMessages[0].path, "Consent-ID");
  assert.equal(await bank.checks(), 0);
  const given = await check(bank.gateway, fundsBody(), { "consent-id": "piis-consent-1" });
  assert.equal(given.status, 200, JSON.stringify(given.body));
  assert.deepEqual(given.body, { fundsAvailable: true });
});

Deno.test("a bank that does not offer the confirmation of funds answers 405 SERVICE_INVALID", async () => {
  await using bank = await fundsBank({ groups: { piis: { service: { offered: false } } } });
  const refused = await check(bank.gateway, fundsBody());
  assert.equal(refused.status, 405, JSON.stringify(refused.body));
  assert.equal(refused.body.tppMessages[0].code, "SERVICE_INVALID");
  assert.equal(await bank.checks(), 0);
});

Deno.test("a confirmation of funds needs a certificate with PSP_IC: PSP_AI alone is ROLE_INVALID", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await makeTestCa(dir);
    const ca = await loadSandboxCa(dir);
    const qwac = async (roles: RoleName[]) =>
      encodeURIComponent(
        (await issueTppCertificate(ca, { type: "QWAC", orgId: "PSDGE-NBG-777002", roles }))
          .certificate,
      );
    await using bank = await fundsBank({
      trust: { anchors: [await Deno.readTextFile(`${dir}/qtsp-ca.pem`)] },
      defaults: { tpp_certificate: { form: "nginx", required: true } },
    });
    const ais = await check(bank.gateway, fundsBody(), {
      "x-ssl-client-cert": await qwac(["PSP_AI"]),
    });
    assert.equal(ais.status, 401, JSON.stringify(ais.body));
    assert.equal(ais.body.tppMessages[0].code, "ROLE_INVALID");
    assert.match(ais.body.tppMessages[0].text, /PSP_IC/);
    assert.equal(await bank.checks(), 0);
    const piis = await check(bank.gateway, fundsBody(), {
      "x-ssl-client-cert": await qwac(["PSP_IC"]),
    });
    assert.equal(piis.status, 200, JSON.stringify(piis.body));
    assert.deepEqual(piis.body, { fundsAvailable: true });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
