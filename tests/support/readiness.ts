/**
 * The gateway's readiness as tests ask for it: `/readyz`, and gateways whose idempotency check
 * makes the store a dependency of every write.
 */
import { startGateway, type TestGateway } from "./gateway.ts";
import { passthroughPolicy, type PolicyInput } from "./policies.ts";
import type { Services } from "../../src/core/services.ts";

/** `/readyz` of `gateway`: its status and JSON body. */
export async function readyz(gateway: { fetch(path: string): Promise<Response> }) {
  const response = await gateway.fetch("/readyz");
  return { status: response.status, body: await response.json() };
}

/**
 * A gateway in front of `upstream` whose idempotency check enforces and fails `fail` (closed
 * unless given) without its store: `sections` add the store, metrics and so on.
 */
export function idempotentGateway(
  upstream: string,
  options: { sections?: PolicyInput; fail?: "open" | "closed"; services?: Partial<Services> } = {},
): Promise<TestGateway> {
  return startGateway({
    policy: passthroughPolicy(options.sections ?? {}, {
      defaults: { idempotency: { mode: "enforce", fail: options.fail ?? "closed" } },
    }),
    upstream,
    services: options.services,
  });
}

/** A payment initiation with an empty body: a write that needs the store. */
export function emptyPayment(gateway: TestGateway): Promise<Response> {
  return gateway.fetch("/v1/payments/sepa-credit-transfers", {
    method: "POST",
    headers: {
      "x-request-id": crypto.randomUUID(),
      "content-type": "application/json",
      "psu-ip-address": "192.168.8.78",
    },
    body: "{}",
  });
}
