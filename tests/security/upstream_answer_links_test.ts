/**
 * An internal address in the core's answer never reaches the TPP because of how the core spells
 * its media type: JSON is recognised by its media type in any case and with any parameters.
 */
import assert from "node:assert/strict";
import { startGateway } from "../support/gateway.ts";
import { passthroughPolicy } from "../support/policies.ts";
import { startUpstream } from "../support/upstream.ts";

for (
  const type of [
    "Application/JSON",
    "APPLICATION/JSON; charset=UTF-8",
    "application/json;charset=utf-8",
    "application/hal+json",
  ]
) {
  Deno.test(`links() rewrites an internal href of an answer typed "${type}"`, async () => {
    await using core = startUpstream(() =>
      new Response(
        JSON.stringify({
          accounts: [],
          _links: { self: { href: "http://core.internal:9000/psd2/v1/accounts" } },
        }),
        { headers: { "content-type": type } },
      )
    );
    await using gateway = await startGateway({
      policy: passthroughPolicy({
        defaults: { links: { upstream_origins: ["http://core.internal:9000"] } },
      }),
      upstream: core.url,
    });
    const response = await gateway.fetch("/v1/accounts", {
      headers: { "x-request-id": crypto.randomUUID(), "consent-id": "c-1" },
    });
    const body = await response.text();
    assert.equal(response.status, 200, body);
    assert.ok(!body.includes("core.internal"), body);
    assert.equal(JSON.parse(body)._links.self.href, "/v1/accounts");
  });
}
