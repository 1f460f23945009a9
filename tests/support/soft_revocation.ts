/**
 * The signature checks' shared soft-revocation case: a signed payment initiation through an
 * in-process gateway, against a real upstream that creates the payment.
 */
import { gatewayApp, type GatewayOptions } from "./gateway.ts";
import { startUpstream } from "./upstream.ts";
import { createMetrics } from "../../src/lib/metrics.ts";
import { PAYMENT_BODY, PAYMENT_TARGET } from "./signing.ts";

/** The answer's status and text, and the requests passed under `soft` counted for `check`. */
export async function signedUnderSoftRevocation(
  policy: GatewayOptions["policy"],
  headers: HeadersInit,
  check: string,
): Promise<{ status: number; text: string; softPasses: number }> {
  await using upstream = startUpstream(() => Response.json({ paymentId: "p-1" }, { status: 201 }));
  const metrics = createMetrics();
  await using gateway = await gatewayApp({ policy, upstream: upstream.url, services: { metrics } });
  const response = await gateway.fetch(PAYMENT_TARGET, {
    method: "POST",
    headers,
    body: PAYMENT_BODY,
  });
  return {
    status: response.status,
    text: await response.text(),
    softPasses: metrics.revocationSoftPasses.value({ check }),
  };
}
