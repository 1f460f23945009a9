/**
 * `policy:check --probe` connects to what the policy names and says what `/readyz` would: a
 * Redis with appendonly no is warned of before the gateway starts (a real redis-server).
 */
import assert from "node:assert/strict";
import { passthroughPolicy, policyYaml } from "../../support/policies.ts";
import { startRedisServer, WITHOUT_REDIS } from "../../support/redis.ts";
import { startUpstream } from "../../support/upstream.ts";

async function probe(file: string, env: Record<string, string>) {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", "main.ts", "policy:check", "--probe", file],
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
}

Deno.test({
  name: "policy:check --probe warns of a Redis with appendonly no, and is quiet on a durable one",
  ignore: WITHOUT_REDIS,
  async fn() {
    await using upstream = startUpstream();
    await using forgetful = await startRedisServer();
    await using durable = await startRedisServer({ durable: true });
    const file = await Deno.makeTempFile({ suffix: ".yaml" });
    try {
      await Deno.writeTextFile(
        file,
        policyYaml(passthroughPolicy({
          store: { kind: "redis", url: "${STORE_URL}" },
          defaults: { idempotency: { mode: "enforce", fail: "closed" } },
        })),
      );
      const bad = await probe(file, { UPSTREAM_URL: upstream.url, STORE_URL: forgetful.url });
      assert.equal(bad.code, 0, bad.stderr);
      assert.match(bad.stdout, /^probe: degraded$/m);
      assert.match(
        bad.stdout,
        /^ {2}store redis: up; appendonly no, maxmemory-policy noeviction$/m,
      );
      assert.match(bad.stdout, /^warning: store: Redis "127\.0\.0\.1:\d+" has appendonly no: /m);

      const good = await probe(file, { UPSTREAM_URL: upstream.url, STORE_URL: durable.url });
      assert.equal(good.code, 0, good.stderr);
      assert.match(good.stdout, /^probe: ready$/m);
      assert.doesNotMatch(good.stdout, /appendonly no/);
    } finally {
      await Deno.remove(file);
    }
  },
});
