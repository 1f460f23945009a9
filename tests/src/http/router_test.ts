import assert from "node:assert/strict";
import { FirstMatchRouter } from "../../../src/http/router.ts";

function routes() {
  const router = new FirstMatchRouter<string>();
  router.add("ALL", "/*", "log");
  router.add("GET", "/v1/accounts/:account-id/balances", "getBalances");
  router.add("ALL", "/v1/accounts/:account-id/balances", "405 balances");
  router.add("GET", "/v1/:payment-service/:payment-product/:paymentId", "getPayment");
  router.add("DELETE", "/v1/:payment-service/:payment-product/:paymentId", "cancelPayment");
  router.add("ALL", "/v1/:payment-service/:payment-product/:paymentId", "405 payment");
  router.add("GET", "/healthz", "health");
  return router;
}

function names(router: FirstMatchRouter<string>, method: string, path: string) {
  const [found] = router.match(method, path) as [[string, Record<string, string>][]];
  return found.map(([handler, params]) => [handler, { ...params }]);
}

Deno.test("FirstMatchRouter.match() returns the * middleware and the first route that fits", () => {
  const router = routes();
  assert.deepEqual(names(router, "GET", "/v1/accounts/a%2Fb/balances"), [
    ["log", {}],
    ["getBalances", { "account-id": "a%2Fb" }],
  ]);
  assert.deepEqual(names(router, "DELETE", "/v1/payments/sepa/p-1"), [
    ["log", {}],
    ["cancelPayment", {
      "payment-service": "payments",
      "payment-product": "sepa",
      paymentId: "p-1",
    }],
  ]);
  // Another method: the path's ALL route (registered before the looser template) answers.
  assert.deepEqual(names(router, "POST", "/v1/accounts/a-1/balances"), [
    ["log", {}],
    ["405 balances", { "account-id": "a-1" }],
  ]);
  assert.deepEqual(names(router, "GET", "/healthz"), [["log", {}], ["health", {}]]);
});

Deno.test("FirstMatchRouter.match() matches whole segments only", () => {
  const router = routes();
  for (
    const path of [
      "/v1/accounts//balances",
      "/v1/accounts/a-1/balances/",
      "/v1/accounts/a-1",
      "/healthz/",
      "/healthzz",
      "/",
      "",
    ]
  ) {
    assert.deepEqual(names(router, "GET", path), [["log", {}]], path);
  }
});

Deno.test("FirstMatchRouter takes routes added after a match into account", () => {
  const router = routes();
  assert.deepEqual(names(router, "GET", "/readyz"), [["log", {}]]);
  router.add("GET", "/readyz", "ready");
  assert.deepEqual(names(router, "GET", "/readyz"), [["log", {}], ["ready", {}]]);
});

Deno.test("FirstMatchRouter.add() refuses patterns it does not implement", () => {
  const router = new FirstMatchRouter<string>();
  for (const path of ["/v1/:id{[0-9]+}", "/v1/*/x", "/v1/:id?", "v1/accounts"]) {
    assert.throws(() => router.add("GET", path, "x"), /FirstMatchRouter takes/, path);
  }
});
