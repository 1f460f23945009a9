/**
 * Issue 35.8: a core's `Location` outside the upstream prefixes reached the TPP with the core's
 * internal host. An absolute Location of an origin that is neither the request's own nor one the
 * policy lists (`links.location_origins`) is now dropped and logged; one of an upstream origin
 * becomes its path.
 */
import assert from "node:assert/strict";
import { startGateway } from "../support/gateway.ts";
import { buildPolicy, passthroughPolicy } from "../support/policies.ts";
import { startUpstream } from "../support/upstream.ts";

/** A gateway in front of a core that answers every read with `location` (given the core's URL). */
async function coreLocating(
  location: string | ((coreUrl: string) => string),
  origins: string[] = [],
) {
  const core: { url: string; close(): Promise<void> } = startUpstream(() =>
    Response.json({ accounts: [] }, {
      status: 200,
      headers: { location: typeof location === "string" ? location : location(core.url) },
    })
  );
  const gateway = await startGateway({
    policy: buildPolicy(passthroughPolicy(), {
      // The interface gives this read no Location: a policy that passes it on must not leak.
      defaults: { proxy: { answer_headers: ["location"] }, links: { location_origins: origins } },
    }),
    upstream: core.url,
  });
  return {
    gateway,
    core,
    async read() {
      const response = await gateway.fetch("/v1/accounts", {
        headers: { "x-request-id": crypto.randomUUID(), "consent-id": "c-1" },
      });
      await response.body?.cancel();
      assert.equal(response.status, 200);
      return response.headers.get("location");
    },
    async [Symbol.asyncDispose]() {
      await gateway.close();
      await core.close();
    },
  };
}

for (
  const location of [
    "http://core-app-3.int.bank.local:8080/internal/payments/p-1",
    "//core-app-3.int.bank.local/internal/payments/p-1",
    "/\\core-app-3.int.bank.local/internal/payments/p-1",
  ]
) {
  Deno.test(`links() drops a core's Location ${JSON.stringify(location)} outside the prefixes`, async () => {
    await using t = await coreLocating(location);
    assert.equal(await t.read(), null);
    assert.ok(
      t.gateway.log.lines.some((line) => String(line.msg).startsWith("Location dropped")),
      "the drop is logged",
    );
  });
}

Deno.test("links() makes the upstream's own Location outside the prefixes relative", async () => {
  await using t = await coreLocating((url) => `${url}/internal/payments/p-1`);
  assert.equal(await t.read(), "/internal/payments/p-1");
});

Deno.test("links() passes a Location of an origin the policy lists, and of the request's own host", async () => {
  await using listed = await coreLocating("https://www.bank.example/help", [
    "https://www.bank.example",
  ]);
  assert.equal(await listed.read(), "https://www.bank.example/help");
  // The gateway's port is known once it listens; the core answers after that.
  let host = "";
  await using own = await coreLocating(() => `http://${host}/help`);
  host = new URL(own.gateway.url).host;
  assert.equal(await own.read(), `http://${host}/help`);
});
