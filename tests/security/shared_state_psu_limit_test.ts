/**
 * Attacks on the per-PSU rate limit: leaving PSU-ID out must never escape it. Without PSU-ID the
 * PSU is the bearer token's subject, and without a subject one shared "unknown PSU" of the TPP.
 */
import assert from "node:assert/strict";
import type { TestGateway } from "../support/gateway.ts";
import { startUpstream, type TestUpstream } from "../support/upstream.ts";
import { onEachStoreGateway } from "../support/each_store.ts";
import { tokenIssuer } from "../support/tpp_tokens.ts";

const issuer = await tokenIssuer();
const TPP = "PSDGE-NBG-123456";

async function read(gateway: TestGateway, headers: Record<string, string>) {
  const response = await gateway.fetch("/v1/accounts", {
    headers: { "x-request-id": crypto.randomUUID(), ...headers },
  });
  const body = await response.json();
  return { status: response.status, code: body.tppMessages?.[0]?.code };
}

async function statuses(n: number, headers: Record<string, string>, gateway: TestGateway) {
  const out = [];
  for (let i = 0; i < n; i++) out.push((await read(gateway, headers)).status);
  return out;
}

/** Registers a test on the memory store and on Redis: a per-PSU limit of 2 a minute. */
function onEachStore(
  title: string,
  fn: (gateway: TestGateway, core: TestUpstream) => Promise<void>,
) {
  onEachStoreGateway(title, {
    core: () => startUpstream(),
    policy: {
      defaults: {
        bearer_token: issuer.options,
        rate_limit: {
          mode: "enforce",
          limits: { per_psu: { key: ["tpp", "psu_id"], limit: 2, window: "1m" } },
        },
      },
    },
  }, fn);
}

onEachStore(
  "rateLimit() counts a request without PSU-ID against the bearer token's subject",
  async (gateway, core) => {
    const alice = await issuer.headers(TPP, { sub: "psu-alice" });
    assert.deepEqual(await statuses(3, alice, gateway), [200, 200, 429]);
    assert.equal(
      (await read(gateway, { ...alice, "psu-id": "psu-alice" })).status,
      429,
      "the same PSU as PSU-ID",
    );
    assert.equal(core.received.length, 2, "the requests over the limit never reached the core");
  },
);

onEachStore(
  "rateLimit() counts requests without PSU-ID and subject against one unknown PSU of the TPP",
  async (gateway, core) => {
    const anonymousPsu = await issuer.headers(TPP);
    assert.deepEqual(await statuses(3, anonymousPsu, gateway), [200, 200, 429]);
    const empty = await read(gateway, { ...anonymousPsu, "psu-id": "" });
    assert.equal(empty.status, 429, "an empty PSU-ID is no PSU either");
    assert.equal(empty.code, "ACCESS_EXCEEDED");
    // Another TPP's unknown PSU has its own count; a named PSU of the first TPP too.
    assert.equal((await read(gateway, await issuer.headers("PSDGE-NBG-000002"))).status, 200);
    assert.equal((await read(gateway, { ...anonymousPsu, "psu-id": "bob" })).status, 200);
    assert.equal(core.received.length, 4);
  },
);
