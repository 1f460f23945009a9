import assert from "node:assert/strict";
import {
  introspectionOptions,
  Introspector,
  looksLikeJwt,
  privateKeyPem,
} from "../../../src/tokens/introspection.ts";
import { startUpstream } from "../../support/upstream.ts";
import { withoutSyncFs } from "../../support/no_sync_fs.ts";
import { readPolicyFiles } from "../../../src/lib/policy_files.ts";

Deno.test("looksLikeJwt() tells a compact JWS from an opaque token", () => {
  const header = btoa(JSON.stringify({ alg: "RS256" })).replace(/=+$/, "");
  assert.equal(looksLikeJwt(`${header}.eyJzdWIiOiJ4In0.c2ln`), true);
  assert.equal(looksLikeJwt("2YotnFZFEjr1zCsicMWpAA"), false);
  assert.equal(looksLikeJwt("a.b.c"), false, "a header that is no JSON");
  assert.equal(looksLikeJwt(`${btoa("{}")}.e30.c2ln`), false, "a header without alg");
});

Deno.test("Introspector.claims() form-encodes the client credentials in HTTP Basic and shares one request among concurrent callers", async () => {
  await using endpoint = startUpstream(async () => {
    await new Promise((r) => setTimeout(r, 30));
    return Response.json({ active: true, scope: "accounts" });
  });
  const introspector = new Introspector(
    introspectionOptions.parse({ url: endpoint.url, client_id: "edge:1", client_secret: "a b+c" }),
    { fetch: globalThis.fetch, now: Date.now },
  );
  const all = await Promise.all([1, 2, 3].map(() => introspector.claims("t")));
  assert.ok(all.every((c) => c.scope === "accounts"));
  assert.equal(endpoint.received.length, 1);
  assert.equal(
    endpoint.received[0].headers.get("authorization"),
    `Basic ${btoa("edge%3A1:a+b%2Bc")}`,
  );
});

Deno.test("privateKeyPem() reads a private_key file read ahead with the policy, never synchronously (Deno Deploy)", async () => {
  const file = await Deno.makeTempFile({ suffix: ".pem" });
  try {
    const pem =
      "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----\n";
    await Deno.writeTextFile(file, pem);
    await readPolicyFiles(
      `defaults:\n  bearer_token:\n    introspection:\n      private_key: ${file}\n`,
    );
    assert.equal(await withoutSyncFs(() => privateKeyPem(file)), pem);
  } finally {
    await Deno.remove(file);
  }
});
