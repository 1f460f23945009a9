/**
 * `deno run --allow-all bench/store_writes.ts`: what one kept write costs each durable store, in
 * process, without HTTP: a payment's two store calls (the decision that claims its X-Request-ID
 * and counts its rate limit, then the completion that keeps a 154-byte answer), one after the
 * other and with 32 requests in flight, on SQLite (`synchronous` normal and full) and on a Deno KV
 * file, the memory store beside them. The figures behind the embedded default (docs/shared_state.md).
 *
 * Environment: STORE_WRITES (writes per reading, default 5000; KV and SQLite full take 1/5 of that).
 */
import { DatabaseSync } from "node:sqlite";
import { MemoryStore } from "../src/store/memory.ts";
import { SqliteStore } from "../src/store/sqlite.ts";
import { kvStore } from "../src/store/kv.ts";
import type { Store } from "../src/store/types.ts";

const writes = Number(Deno.env.get("STORE_WRITES") ?? 5000);
const dir = await Deno.makeTempDir({ prefix: "store-writes-" });
const answer = { status: 201, headers: [["content-type", "application/json"]], body: "" } as {
  status: number;
  headers: [string, string][];
  body: string;
};
answer.body = btoa(JSON.stringify({ transactionStatus: "RCVD", paymentId: "p".repeat(80) }));

/** One kept write: decide, then complete. */
async function write(store: Store, i: number, tpp: string): Promise<void> {
  const part = {
    key: `idem:${tpp}:${i}`,
    mode: "replay" as const,
    fingerprint: "fp",
    token: crypto.randomUUID(),
    enforce: true,
    inflightMs: 30_000,
    retentionMs: 86_400_000,
  };
  const limit = {
    name: "per_tpp",
    key: `rl:per_tpp:${tpp}`,
    limit: 1_000_000,
    windowMs: 1000,
    burst: 1_000_000,
    enforce: true,
  };
  const verdict = await store.decide({ idempotency: part, limits: [limit] });
  if (verdict.idempotency?.outcome !== "claimed") throw new Error("not claimed");
  await store.complete({ ...part, action: "done", response: answer });
}

/**
 * Microseconds per write one at a time (mean, p50, p99, max), and writes a second with 32 in
 * flight; for a file (`path`), its bytes per kept write once its WAL is checkpointed.
 */
async function measure(name: string, store: Store, count: number, path?: string) {
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await write(store, i, "seq");
    latencies.push((performance.now() - started) * 1000);
  }
  latencies.sort((a, b) => a - b);
  const mean = latencies.reduce((a, b) => a + b, 0) / count;
  const at = (q: number) => latencies[Math.floor(count * q)].toFixed(0).padStart(5);
  // 32 in flight, each of its own TPP (one TPP's requests share a rate-limit key and take turns).
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: 32 }, async (_, worker) => {
    while (next < count) await write(store, next++, `tpp${worker}`);
  }));
  const rate = count / ((performance.now() - started) / 1000);
  await store.close();
  let size = "";
  if (path) {
    const db = new DatabaseSync(path);
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    db.close();
    size = `, ${((await Deno.stat(path)).size / (2 * count)).toFixed(0)} bytes a kept write`;
  }
  console.log(
    `${name.padEnd(15)} ${mean.toFixed(0).padStart(5)} us a write (p50 ${at(0.5)}, p99 ${
      at(0.99)
    }, max ${latencies.at(-1)!.toFixed(0).padStart(6)}), ${
      rate.toFixed(0).padStart(6)
    } writes/s with 32 in flight (${count} writes)${size}`,
  );
}

try {
  await measure("memory", new MemoryStore({ maxEntries: 1e7, maxBytes: 1e10 }), writes);
  const normal = `${dir}/normal.sqlite`;
  await measure("sqlite, normal", new SqliteStore({ path: normal }), writes, normal);
  await measure(
    "sqlite, full",
    new SqliteStore({ path: `${dir}/full.sqlite`, synchronous: "full" }),
    Math.ceil(writes / 5),
  );
  await measure(
    "kv file",
    await kvStore({ path: `${dir}/store.kv`, timeoutMs: 10_000 }),
    Math.ceil(writes / 5),
  );
} finally {
  await Deno.remove(dir, { recursive: true });
}
