/**
 * Redis's persistence against none, for the payment initiation on Redis: two redis-servers, one as
 * production runs it (`appendonly yes`, `appendfsync everysec`) and one without persistence
 * (`appendonly no`), each behind its own gateway with the default policy, driven in interleaved
 * rounds with the POST of the bench's `write-redis` row (a fresh X-Request-ID per request). Prints
 * each round's requests per second and CPU per request of the gateway and of its Redis, and the
 * medians: what persistence costs Redis, and what it takes from the gateway on shared cores.
 *
 *   deno run --allow-all bench/redis_persistence.ts [rounds=6] [seconds=3] [warmup=5]
 */
import { freePort, waitForPort } from "./ports.ts";
import { children, command, cpuMicros, spawn, stopAll, WRITE, wrk } from "./load.ts";
import { defaultPolicyFile } from "./policies.ts";

const [rounds, seconds, warmup] = [6, 3, 5].map((d, i) => Number(Deno.args[i] ?? d));

const upstream = freePort();
spawn(["bench/upstream.ts", String(upstream)], {}, "load");
await waitForPort(upstream);
const policy = await defaultPolicyFile();

/** A redis-server with `persistence` flags and a default-policy gateway on it. */
async function pair(name: string, persistence: string[]) {
  const port = freePort();
  const dir = await Deno.makeTempDir({ prefix: "bench-redis-" });
  const redis = command(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", ...persistence],
    "load",
    { stdout: "null", stderr: "null" },
  ).spawn();
  children.push(redis);
  await waitForPort(port);
  const gatewayPort = freePort();
  const gateway = spawn(["main.ts"], {
    GATEWAY_POLICY: policy,
    UPSTREAM_URL: `http://127.0.0.1:${upstream}`,
    PORT: String(gatewayPort),
    STORE_KIND: "redis",
    STORE_URL: `redis://127.0.0.1:${port}`,
  });
  await waitForPort(gatewayPort);
  return { name, dir, redis: redis.pid, gateway, port: gatewayPort, rounds: [] as number[][] };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1];
const pairs = [
  await pair("appendonly yes, everysec", [
    ...["--appendonly", "yes", "--appendfsync", "everysec", "--maxmemory-policy", "noeviction"],
  ]),
  await pair("appendonly no", ["--appendonly", "no"]),
];
try {
  for (const p of pairs) await wrk(p.port, WRITE, warmup, 32);
  for (let round = 0; round < rounds; round++) {
    for (const p of pairs) {
      const [gateway, redis] = [await cpuMicros(p.gateway), await cpuMicros(p.redis)];
      const result = await wrk(p.port, WRITE, seconds, 32);
      if (result.non2xx > 0) throw new Error(`${p.name}: ${result.non2xx} answers of 400 or more`);
      p.rounds.push([
        result.rps,
        (await cpuMicros(p.gateway) - gateway) / result.requests,
        (await cpuMicros(p.redis) - redis) / result.requests,
      ]);
    }
  }
  for (const p of pairs) {
    const column = (i: number) => p.rounds.map((r) => r[i]);
    console.log(
      `${p.name.padEnd(26)} median ${median(column(0)).toFixed(0)} req/s, gateway ${
        median(column(1)).toFixed(0)
      } us, redis ${median(column(2)).toFixed(1)} us of CPU per request; rounds: ${
        p.rounds.map((r) => r.map((v) => v.toFixed(0)).join("/")).join("  ")
      }`,
    );
  }
} finally {
  stopAll();
  await new Promise((resolve) => setTimeout(resolve, 500));
  for (const p of pairs) await Deno.remove(p.dir, { recursive: true }).catch(() => {});
}
