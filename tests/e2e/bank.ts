/**
 * The gateway in front of a sandbox bank whose SCA pages a browser reaches (its own origin under
 * the name `localhost`), with access to the sandbox's controls, for the SCA flows end to end.
 */
import assert from "node:assert/strict";
import { localOrigin, serveSandbox } from "../../src/sandbox/serve.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { call, PSU_IP } from "./flow.ts";

/** A running gateway and sandbox. */
export interface Bank extends AsyncDisposable {
  gateway: TestGateway;
  /** The sandbox as the gateway reaches it (`http://127.0.0.1:<port>`). */
  sandboxUrl: string;
  /** Calls a sandbox control, for example `control("POST", "/sandbox/reset")`. */
  // deno-lint-ignore no-explicit-any
  control(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
}

/** Starts a sandbox (decoupled delay `decoupledDelayMs`, default 300) and a gateway before it. */
export async function startBank(options: { decoupledDelayMs?: number } = {}): Promise<Bank> {
  const sandbox = serveSandbox(0, {
    scaOrigin: localOrigin,
    decoupledDelayMs: options.decoupledDelayMs ?? 300,
  });
  const gateway = await startGateway({ upstream: sandbox.url });
  return {
    gateway,
    sandboxUrl: sandbox.url,
    async control(method, path, body) {
      const response = await fetch(`${sandbox.url}${path}`, {
        method,
        headers: body === undefined ? {} : { "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined };
    },
    async [Symbol.asyncDispose]() {
      await gateway.close();
      await sandbox.server.shutdown();
    },
  };
}

/** A payment body as a TPP sends it. */
export const PAYMENT = {
  endToEndIdentification: "E2E-SCA-0001",
  debtorAccount: { iban: "GE42SB0000000101904917" },
  instructedAmount: { currency: "GEL", amount: "125.50" },
  creditorAccount: { iban: "GE29NB0000000101904917" },
  creditorName: "Tbilisi Energy",
  remittanceInformationUnstructured: "Invoice 2026-11",
};

/** A consent body as a TPP sends it. */
export const CONSENT = {
  access: {
    balances: [{ iban: "GE42SB0000000101904917" }],
    transactions: [{ iban: "GE42SB0000000101904917" }],
  },
  recurringIndicator: true,
  validUntil: "9999-12-31",
  frequencyPerDay: 4,
  combinedServiceIndicator: false,
};

/** Initiates a domestic payment through the gateway with extra headers; asserts the 201. */
export async function initiatePayment(bank: Bank, headers: Record<string, string> = {}) {
  const created = await call(bank.gateway, "POST", "/v1/payments/domestic", {
    body: PAYMENT,
    headers: { "psu-ip-address": PSU_IP, ...headers },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created;
}

/** Creates a consent through the gateway with extra headers; asserts the 201. */
export async function createConsent(bank: Bank, headers: Record<string, string> = {}) {
  const created = await call(bank.gateway, "POST", "/v1/consents", {
    body: CONSENT,
    headers: { "psu-ip-address": PSU_IP, ...headers },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created;
}
