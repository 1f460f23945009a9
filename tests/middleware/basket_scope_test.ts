import assert from "node:assert/strict";
import type { Mode } from "../../src/core/check.ts";
import type { TestGateway } from "../support/gateway.ts";
import { gatewayOn, onEachStore } from "../support/each_store.ts";
import type { LevelInput } from "../support/policies.ts";
import { startUpstream, type TestUpstream } from "../support/upstream.ts";
import { tokenIssuer } from "../support/tpp_tokens.ts";
import { consentBody, initiationHeaders, singlePayment } from "../support/requests.ts";

const issuer = await tokenIssuer();
const TOKEN = "metrics-token-for-tests";

/**
 * A core that checks no ownership at all: it creates payments (P-1, ...: upper case, as a core
 * may spell its ids), consents (c-1, ...) and baskets (b-1, ...), and answers 200 to anything else.
 */
function looseCore(): TestUpstream {
  const made = { payment: 0, consent: 0, basket: 0 };
  return startUpstream((request) => {
    const path = new URL(request.url).pathname;
    if (request.method === "POST" && /^\/psd2\/v1\/payments\/[^/]+$/.test(path)) {
      const paymentId = `P-${++made.payment}`;
      return Response.json({ transactionStatus: "RCVD", paymentId }, { status: 201 });
    }
    if (request.method === "POST" && path === "/psd2/v1/consents") {
      const consentId = `c-${++made.consent}`;
      return Response.json({ consentStatus: "received", consentId }, { status: 201 });
    }
    if (request.method === "POST" && path === "/psd2/v1/signing-baskets") {
      const basketId = `b-${++made.basket}`;
      return Response.json({ transactionStatus: "RCVD", basketId }, { status: 201 });
    }
    if (request.method === "DELETE") return new Response(null, { status: 204 });
    return Response.json({ transactionStatus: "RCVD", authorisationIds: [] });
  });
}

function level(basket: LevelInput["basket_scope"]): LevelInput {
  return {
    bearer_token: issuer.options,
    consent_scope: { mode: "enforce" },
    basket_scope: basket,
  };
}

/** Registers `fn` on a memory and a Redis store, a gateway with `basket_scope` set to `basket`. */
function onEveryStore(
  name: string,
  basket: LevelInput["basket_scope"],
  fn: (gateway: TestGateway, core: TestUpstream) => Promise<void>,
) {
  onEachStore(`basketScope() ${name}`, async (store) => {
    await using core = looseCore();
    await using gateway = await gatewayOn(store, core, {
      metrics: { token: TOKEN },
      defaults: level(basket),
    });
    await fn(gateway, core);
  });
}

async function send(
  gateway: TestGateway,
  method: string,
  path: string,
  options: { tpp?: string; body?: unknown } = {},
) {
  const identity = options.tpp ? await issuer.headers(options.tpp) : {};
  const response = await gateway.fetch(path, {
    method,
    headers: initiationHeaders({ "x-request-id": crypto.randomUUID(), ...identity }),
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

async function pay(gateway: TestGateway, tpp: string): Promise<string> {
  const made = await send(gateway, "POST", "/v1/payments/sepa-credit-transfers", {
    tpp,
    body: singlePayment(),
  });
  assert.equal(made.status, 201);
  return made.body.paymentId;
}

async function consent(gateway: TestGateway, tpp: string): Promise<string> {
  const made = await send(gateway, "POST", "/v1/consents", { tpp, body: consentBody() });
  assert.equal(made.status, 201);
  return made.body.consentId;
}

function basket(gateway: TestGateway, tpp: string | undefined, body: Record<string, unknown>) {
  return send(gateway, "POST", "/v1/signing-baskets", { tpp, body });
}

/** The basket POSTs that reached the core. */
function basketsAtCore(core: TestUpstream): number {
  return core.received.filter((r) => r.method === "POST" && r.path === "/psd2/v1/signing-baskets")
    .length;
}

async function counts(gateway: TestGateway): Promise<string[]> {
  const response = await gateway.fetch("/metrics", {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  return (await response.text()).split("\n").filter((line) =>
    line.startsWith("xs2a_basket_scope_total{")
  );
}

onEveryStore(
  "refuses a basket of another TPP's payment or consent with 400 RESOURCE_UNKNOWN",
  { mode: "enforce" },
  async (gateway, core) => {
    const mine = await pay(gateway, "tpp-b");
    const theirs = await pay(gateway, "tpp-a");
    const theirConsent = await consent(gateway, "tpp-a");
    const paid = await basket(gateway, "tpp-b", { paymentIds: [mine, theirs] });
    assert.equal(paid.status, 400);
    assert.deepEqual(paid.body.tppMessages[0], {
      category: "ERROR",
      code: "RESOURCE_UNKNOWN",
      path: "paymentIds[1]",
      text: `Payment "${theirs}" is unknown to this TPP`,
    });
    const consented = await basket(gateway, "tpp-b", {
      paymentIds: [mine],
      consentIds: [theirConsent],
    });
    assert.equal(consented.status, 400);
    assert.equal(consented.body.tppMessages[0].path, "consentIds[0]");
    assert.equal(basketsAtCore(core), 0);
    // The owner's own basket of the same ids passes, its ids in another case too.
    const own = await basket(gateway, "tpp-a", {
      paymentIds: [theirs.toLowerCase()],
      consentIds: [theirConsent.toUpperCase()],
    });
    assert.equal(own.status, 201);
    assert.equal(basketsAtCore(core), 1);
    assert.ok(
      (await counts(gateway)).some((line) =>
        line.includes('op="createSigningBasket"') && line.includes('result="refused"} 2')
      ),
    );
  },
);

onEveryStore(
  "refuses reads, deletes and authorisations of another TPP's basket with 403 RESOURCE_UNKNOWN",
  { mode: "enforce" },
  async (gateway, core) => {
    const made = await basket(gateway, "tpp-a", { paymentIds: [await pay(gateway, "tpp-a")] });
    assert.equal(made.status, 201);
    const id = made.body.basketId as string;
    const before = core.received.length;
    const attempts: [string, string][] = [
      ["GET", `/v1/signing-baskets/${id}`],
      ["GET", `/v1/signing-baskets/${id.toUpperCase()}/status`],
      ["DELETE", `/v1/signing-baskets/${id}`],
      ["POST", `/v1/signing-baskets/${id}/authorisations`],
      ["GET", `/v1/signing-baskets/${id}/authorisations`],
      ["GET", `/v1/signing-baskets/${id}/authorisations/a-1`],
      ["PUT", `/v1/signing-baskets/${id}/authorisations/a-1`],
    ];
    for (const [method, path] of attempts) {
      const body = method === "PUT" || method === "POST" ? {} : undefined;
      const refused = await send(gateway, method, path, { tpp: "tpp-b", body });
      assert.equal(refused.status, 403, `${method} ${path}`);
      assert.equal(refused.body.tppMessages[0].code, "RESOURCE_UNKNOWN");
      assert.equal(refused.body.tppMessages[0].path, "basketId");
    }
    assert.equal(core.received.length, before, "nothing of tpp-b reached the core");
    const own = await send(gateway, "GET", `/v1/signing-baskets/${id}/status`, { tpp: "tpp-a" });
    assert.equal(own.status, 200);
  },
);

onEveryStore(
  "forwards ids the gateway never saw, and callers without a TPP identity, by default",
  { mode: "enforce" },
  async (gateway, core) => {
    const unseen = await basket(gateway, "tpp-b", { paymentIds: ["made-before-the-gateway"] });
    assert.equal(unseen.status, 201);
    const read = await send(gateway, "GET", "/v1/signing-baskets/b-unseen", { tpp: "tpp-b" });
    assert.equal(read.status, 200);
    const theirs = await pay(gateway, "tpp-a");
    const anonymous = await basket(gateway, undefined, { paymentIds: [theirs] });
    assert.equal(anonymous.status, 201, "nothing to compare without a TPP identity");
    assert.equal(basketsAtCore(core), 2);
    const lines = await counts(gateway);
    assert.ok(lines.some((l) => l.includes('op="createSigningBasket",result="unknown"} 2')));
  },
);

onEveryStore(
  "refuses ids the gateway never saw with unknown_id: refuse",
  { mode: "enforce", unknown_id: "refuse" },
  async (gateway, core) => {
    const mine = await pay(gateway, "tpp-b");
    const unseen = await basket(gateway, "tpp-b", { paymentIds: [mine, "made-before"] });
    assert.equal(unseen.status, 400);
    assert.equal(unseen.body.tppMessages[0].path, "paymentIds[1]");
    assert.equal(
      unseen.body.tppMessages[0].text,
      'Payment "made-before" is not known to the gateway for this TPP',
    );
    const read = await send(gateway, "GET", "/v1/signing-baskets/b-unseen", { tpp: "tpp-b" });
    assert.equal(read.status, 403);
    assert.equal(basketsAtCore(core), 0);
  },
);

for (const mode of ["report", "off"] as Mode[]) {
  onEveryStore(
    `forwards another TPP's payment in mode ${mode}`,
    { mode },
    async (gateway, core) => {
      const theirs = await pay(gateway, "tpp-a");
      const made = await basket(gateway, "tpp-b", { paymentIds: [theirs] });
      assert.equal(made.status, 201);
      assert.equal(basketsAtCore(core), 1);
      if (mode === "report") {
        const findings = gateway.log.lines.flatMap((l) =>
          (l.findings as { check: string; code: string; path: string }[] | undefined) ?? []
        ).filter((f) => f.check === "basket_scope");
        const found = findings.some((f) =>
          f.code === "RESOURCE_UNKNOWN" && f.path === "paymentIds[0]"
        );
        assert.ok(found, "the refusal is reported");
      }
    },
  );
}
