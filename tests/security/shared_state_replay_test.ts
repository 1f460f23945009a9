/**
 * Attacks on X-Request-ID replay: a stored answer goes back only to the identified TPP that got
 * it first. A caller without TPP identity (the default policy's anonymous callers, all behind
 * one address when a terminator or a NAT is in front) never gets a stored answer: a reused id
 * is refused, and the core never sees the request again.
 */
import assert from "node:assert/strict";
import type { TestGateway } from "../support/gateway.ts";
import { startUpstream, type TestUpstream } from "../support/upstream.ts";
import { initiationHeaders, singlePayment } from "../support/requests.ts";
import { onEachStoreGateway } from "../support/each_store.ts";
import { tokenIssuer } from "../support/tpp_tokens.ts";

const PAYMENTS = "/v1/payments/sepa-credit-transfers";
const issuer = await tokenIssuer();

/** A core that creates a new payment for every request it executes. */
function paymentCore(): TestUpstream {
  return startUpstream(() =>
    Response.json(
      { transactionStatus: "RCVD", paymentId: crypto.randomUUID() },
      { status: 201 },
    )
  );
}

function executions(core: TestUpstream, id: string): number {
  return core.received.filter((r) => r.headers.get("x-request-id") === id).length;
}

async function pay(gateway: TestGateway, id: string, headers: Record<string, string> = {}) {
  const response = await gateway.fetch(PAYMENTS, {
    method: "POST",
    headers: { ...initiationHeaders({ "x-request-id": id }), ...headers },
    body: JSON.stringify(singlePayment()),
  });
  return {
    status: response.status,
    replay: response.headers.get("x-idempotent-replay"),
    body: await response.json(),
  };
}

/** Runs `fn` against a gateway on each store backend. */
function onEachStore(
  title: string,
  fn: (gateway: TestGateway, core: TestUpstream) => Promise<void>,
) {
  onEachStoreGateway(title, {
    core: paymentCore,
    policy: {
      defaults: {
        bearer_token: issuer.options,
        idempotency: { mode: "enforce", writes: "replay" },
      },
    },
  }, fn);
}

onEachStore(
  "idempotency() never replays a stored answer to another caller without TPP identity",
  async (gateway, core) => {
    const id = crypto.randomUUID();
    const first = await pay(gateway, id);
    assert.equal(first.status, 201);
    // Another anonymous caller (the same peer address, as behind a NAT or a terminator).
    const second = await pay(gateway, id);
    assert.equal(second.status, 400, JSON.stringify(second.body));
    assert.equal(second.body.tppMessages[0].code, "FORMAT_ERROR");
    assert.equal(second.body.tppMessages[0].path, "X-Request-ID");
    assert.equal(second.replay, null);
    assert.ok(!JSON.stringify(second.body).includes(first.body.paymentId), "no stored answer");
    assert.equal(executions(core, id), 1, "the core did not execute it again");
  },
);

onEachStore(
  "idempotency() replays a stored answer to the identified TPP that got it, and to no other",
  async (gateway, core) => {
    const id = crypto.randomUUID();
    const alice = await issuer.headers("PSDGE-NBG-000001");
    const first = await pay(gateway, id, alice);
    assert.equal(first.status, 201);
    const again = await pay(gateway, id, alice);
    assert.equal(again.replay, "true");
    assert.deepEqual(again.body, first.body);
    // Another TPP with the same X-Request-ID: its own request, never the first TPP's answer.
    const mallory = await pay(gateway, id, await issuer.headers("PSDGE-NBG-666666"));
    assert.equal(mallory.status, 201);
    assert.equal(mallory.replay, null);
    assert.notEqual(mallory.body.paymentId, first.body.paymentId);
    assert.equal(executions(core, id), 2, "once for each TPP");
  },
);

onEachStore(
  "idempotency() keeps a TPP whose token names an address apart from callers without identity",
  async (gateway, core) => {
    const id = crypto.randomUUID();
    const first = await pay(gateway, id);
    assert.equal(first.status, 201);
    // A token whose client id looks like the key of the anonymous callers of 127.0.0.1.
    const spoof = await pay(gateway, id, await issuer.headers("ip:127.0.0.1"));
    assert.notEqual(spoof.replay, "true");
    assert.ok(!JSON.stringify(spoof.body).includes(first.body.paymentId));
    assert.ok(executions(core, id) <= 2);
  },
);

onEachStore(
  "idempotency() tells a caller without TPP identity nothing about the request an id was used for",
  async (gateway, core) => {
    const id = crypto.randomUUID();
    assert.equal((await pay(gateway, id)).status, 201);
    // Guesses under the same id: "used for another request" against "used" would say whether a
    // guess matched the first caller's request (method, path, query and body).
    const guess = singlePayment();
    (guess.instructedAmount as Record<string, string>).amount = "999.00";
    const other = await gateway.fetch(PAYMENTS, {
      method: "POST",
      headers: initiationHeaders({ "x-request-id": id }),
      body: JSON.stringify(guess),
    });
    const same = await pay(gateway, id);
    const texts = [(await other.json()).tppMessages[0], same.body.tppMessages[0]];
    assert.deepEqual([other.status, same.status], [400, 400]);
    for (const message of texts) {
      assert.deepEqual(message, {
        category: "ERROR",
        code: "FORMAT_ERROR",
        path: "X-Request-ID",
        text: `X-Request-ID "${id}" was already used; every request needs a new one`,
      });
    }
    assert.equal(executions(core, id), 1);
  },
);
