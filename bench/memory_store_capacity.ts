/**
 * How many identified TPPs' payments the memory store's defaults keep (README, "Size it"): the
 * gateway (bearer tokens of 20 TPPs, idempotency enforce and fail closed, the default `store`)
 * in front of the sandbox bank, 8 requests at once, each a new payment, until the first 503. The
 * kept answers at that point, over a day of retention, are the writes a second it holds.
 *
 *   deno run -A bench/memory_store_capacity.ts
 */
import { startGateway } from "../tests/support/gateway.ts";
import { passthroughPolicy } from "../tests/support/policies.ts";
import { initiationHeaders, singlePayment } from "../tests/support/requests.ts";
import { tokenIssuer } from "../tests/support/tpp_tokens.ts";
const issuer = await tokenIssuer();
await using gateway = await startGateway({
  policy: passthroughPolicy({
    store: { kind: "memory" },
    defaults: { bearer_token: issuer.options, idempotency: { mode: "enforce", fail: "closed" } },
  }),
});
const tpps = Array.from({ length: 20 }, (_, i) => `PSDDE-BAFIN-${String(100000 + i)}`);
const auth = await Promise.all(tpps.map((t) => issuer.headers(t)));
let ok = 0, first503 = -1, i = 0;
const statuses = new Map<number, number>();
async function worker() {
  while (first503 < 0) {
    const n = i++;
    const r = await gateway.fetch("/v1/payments/sepa-credit-transfers", {
      method: "POST",
      headers: { ...initiationHeaders({ "x-request-id": crypto.randomUUID() }), ...auth[n % 20] },
      body: JSON.stringify(singlePayment()),
    });
    await r.body?.cancel();
    statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    if (r.status === 201) ok++;
    else if (r.status === 503 && first503 < 0) first503 = ok;
  }
}
await Promise.all(Array.from({ length: 8 }, worker));
const c = gateway.store.condition!();
console.log(
  JSON.stringify({
    kept: first503,
    statuses: Object.fromEntries(statuses),
    capacity: c.capacity,
    warnings: c.warnings,
  }),
);
