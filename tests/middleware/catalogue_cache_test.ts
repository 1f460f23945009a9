import assert from "node:assert/strict";
// In-process through the app's fetch (the upstream is still real HTTP); see tests/support/gateway.ts.
import { gatewayApp as startGateway } from "../support/gateway.ts";
import { passthroughPolicy, type PolicyInput, policyYaml } from "../support/policies.ts";
import { startUpstream } from "../support/upstream.ts";
import { PIPELINE } from "../../middleware/mod.ts";
import { parsePolicy } from "../../src/policy/load.ts";

/** An upstream that answers each request with a body naming it and its number. */
function catalogue(status = 200) {
  let n = 0;
  return startUpstream((_, recorded) => Response.json({ path: recorded.path, n: n++ }, { status }));
}

function cached(ttl = "60s") {
  return passthroughPolicy({ groups: { products: { catalogue_cache: { ttl } } } });
}

async function body(response: Promise<Response>) {
  const answer = await response;
  return { answer, text: await answer.text() };
}

Deno.test("catalogueCache() answers the catalogue from memory for its TTL, keyed by path, query and Accept-Language", async () => {
  await using upstream = catalogue();
  await using gateway = await startGateway({ upstream: upstream.url, policy: cached() });
  const en = { headers: { "accept-language": "en" } };
  const first = await body(gateway.fetch("/v1/products/deposits?offset=0", en));
  const second = await body(gateway.fetch("/v1/products/deposits?offset=0", en));
  assert.equal(first.answer.status, 200);
  assert.equal(second.answer.status, 200);
  assert.equal(second.text, first.text);
  assert.equal(upstream.received.length, 1);
  assert.match(second.answer.headers.get("cache-control")!, /^public, max-age=(59|60)$/);
  assert.equal(second.answer.headers.get("etag"), first.answer.headers.get("etag"));
  assert.match(first.answer.headers.get("etag")!, /^"[A-Za-z0-9_-]{27}"$/);
  assert.equal(second.answer.headers.get("vary"), "Accept, Accept-Language");
  assert.equal(second.answer.headers.get("content-type"), "application/json");
  // Another language, another query, another path: each its own entry.
  await body(
    gateway.fetch("/v1/products/deposits?offset=0", { headers: { "accept-language": "ka" } }),
  );
  await body(gateway.fetch("/v1/products/deposits?offset=1", en));
  await body(gateway.fetch("/v1/products/cards?offset=0", en));
  assert.equal(upstream.received.length, 4);
  const ka = await body(gateway.fetch("/v1/products/deposits?offset=0", {
    headers: { "accept-language": "ka" },
  }));
  assert.equal(ka.answer.status, 200);
  assert.equal(upstream.received.length, 4);
});

Deno.test("catalogueCache() answers 304 to If-None-Match with the ETag, without the core", async () => {
  await using upstream = catalogue();
  await using gateway = await startGateway({ upstream: upstream.url, policy: cached() });
  const first = await body(gateway.fetch("/v1/products/deposits"));
  const etag = first.answer.headers.get("etag")!;
  const again = await body(gateway.fetch("/v1/products/deposits", {
    headers: { "if-none-match": `"other", ${etag}` },
  }));
  assert.equal(again.answer.status, 304);
  assert.equal(again.text, "");
  assert.equal(again.answer.headers.get("etag"), etag);
  assert.match(again.answer.headers.get("cache-control")!, /^public, max-age=\d+$/);
  const stale = await body(gateway.fetch("/v1/products/deposits", {
    headers: { "if-none-match": '"other"' },
  }));
  assert.equal(stale.answer.status, 200);
  assert.equal(stale.text, first.text);
  assert.equal(upstream.received.length, 1);
});

Deno.test("catalogueCache() asks the core again once the TTL ran out", async () => {
  await using upstream = catalogue();
  await using gateway = await startGateway({ upstream: upstream.url, policy: cached("1s") });
  await body(gateway.fetch("/v1/products/deposits"));
  await body(gateway.fetch("/v1/products/deposits"));
  assert.equal(upstream.received.length, 1);
  await new Promise((resolve) => setTimeout(resolve, 1100));
  await body(gateway.fetch("/v1/products/deposits"));
  assert.equal(upstream.received.length, 2);
});

Deno.test("catalogueCache() keeps no error answer of the core", async () => {
  await using upstream = catalogue(500);
  await using gateway = await startGateway({ upstream: upstream.url, policy: cached() });
  const first = await body(gateway.fetch("/v1/products/deposits"));
  assert.equal(first.answer.status, 500);
  assert.equal(first.answer.headers.get("etag"), null);
  await body(gateway.fetch("/v1/products/deposits"));
  assert.equal(upstream.received.length, 2);
});

Deno.test("catalogueCache() does not cache without a ttl", async () => {
  await using upstream = catalogue();
  await using gateway = await startGateway({ upstream: upstream.url, policy: passthroughPolicy() });
  await body(gateway.fetch("/v1/products/deposits"));
  await body(gateway.fetch("/v1/products/deposits"));
  assert.equal(upstream.received.length, 2);
});

Deno.test("catalogueCache() is refused at policy load for account, payment, consent and checkout operations", () => {
  const load = (parts: PolicyInput) =>
    parsePolicy("cache.yaml", policyYaml(passthroughPolicy(parts)), {
      ...PIPELINE,
      env: () => "http://127.0.0.1:1",
    });
  for (const group of ["ais", "pis", "consents", "checkout"]) {
    assert.throws(
      () => load({ groups: { [group]: { catalogue_cache: { ttl: "60s" } } } }),
      new RegExp(`catalogue_cache.*only the "products" group may be cached, not "${group}"`, "s"),
    );
  }
  assert.throws(
    () => load({ defaults: { catalogue_cache: { ttl: "60s" } } }),
    /not "ais"/,
  );
  assert.throws(
    () => load({ operations: { getAccountList: { catalogue_cache: { ttl: "60s" } } } }),
    /getAccountList/,
  );
  assert.doesNotThrow(() => load({ groups: { products: { catalogue_cache: { ttl: "60s" } } } }));
});
