import assert from "node:assert/strict";
import { startGateway } from "../../support/gateway.ts";
import { passthroughPolicy, type PolicyInput } from "../../support/policies.ts";
import { startUpstream } from "../../support/upstream.ts";

const KEY = "a-32-character-pseudonym-key-000";

async function pseudonym(psuId: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(KEY),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(psuId));
  return `hmac:${new Uint8Array(mac).toHex().slice(0, 32)}`;
}

async function logged(sections: PolicyInput, psuIds: string[]) {
  await using upstream = startUpstream();
  await using gateway = await startGateway({
    policy: passthroughPolicy(sections),
    upstream: upstream.url,
  });
  for (const psuId of psuIds) {
    const response = await gateway.fetch("/v1/consents/c-1/status", {
      headers: { "x-request-id": crypto.randomUUID(), "psu-id": psuId },
    });
    await response.body?.cancel();
  }
  return gateway.log.lines.filter((l) => l.op === "getConsentStatus");
}

Deno.test("accessLog() pseudonymises PSU-ID with HMAC-SHA-256 under the policy's key", async () => {
  const lines = await logged(
    { access_log: { psu_id: "hmac", hmac_key: KEY } },
    ["PSU-4711-alice", "PSU-4711-alice", "PSU-0815-bob"],
  );
  assert.deepEqual(lines.map((l) => l.psu), [
    await pseudonym("PSU-4711-alice"),
    await pseudonym("PSU-4711-alice"),
    await pseudonym("PSU-0815-bob"),
  ]);
  assert.notEqual(lines[0].psu, lines[2].psu);
  for (const line of lines) assert.doesNotMatch(JSON.stringify(line), /alice|bob|4711|0815/);
});

Deno.test("accessLog() masks PSU-ID by default", async () => {
  const lines = await logged({}, ["PSU-4711-alice"]);
  assert.doesNotMatch(String(lines[0].psu), /^hmac:|alice/);
});

Deno.test("access_log.psu_id: hmac without a key is refused at load", async () => {
  await assert.rejects(
    startGateway({
      policy: passthroughPolicy({ access_log: { psu_id: "hmac" } }),
      upstream: "http://127.0.0.1:9",
    }),
    /access_log\.hmac_key: psu_id: hmac needs a key/,
  );
});
