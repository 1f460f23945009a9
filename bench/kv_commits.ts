/**
 * The KV file's ceiling: what the KV rows' gateway asks of `Deno.openKv(<file>)` per claim of an
 * X-Request-ID (src/store/kv.ts: read the key, then an atomic commit that checks it and sets it
 * with an expiry), as fast as the file takes it, with as many at a time as wrk's connections.
 * Prints one JSON line: claims committed, seconds, commits per second.
 *
 *   deno run --allow-all bench/kv_commits.ts [seconds=3] [concurrency=32]
 */
const seconds = Number(Deno.args[0] ?? 3);
const concurrency = Number(Deno.args[1] ?? 32);
const dir = await Deno.makeTempDir({ prefix: "bench-kv-commits-" });
const kv = await Deno.openKv(`${dir}/store.kv`);
const value = { v: { s: "claimed" }, e: Date.now() + 86_400_000 };

async function claim(id: string): Promise<void> {
  const key = ["xs2a:", `id:${id}`];
  const [read] = await kv.getMany([key]);
  const result = await kv.atomic().check({ key, versionstamp: read.versionstamp })
    .set(key, value, { expireIn: 86_400_000 }).commit();
  if (!result.ok) throw new Error("a fresh key was taken");
}

// Warm: the file made, SQLite's pages in memory.
for (let i = 0; i < 200; i++) await claim(crypto.randomUUID());
let committed = 0;
const started = performance.now();
const until = started + seconds * 1000;
await Promise.all(Array.from({ length: concurrency }, async () => {
  while (performance.now() < until) {
    await claim(crypto.randomUUID());
    committed++;
  }
}));
const elapsed = (performance.now() - started) / 1000;
kv.close();
await Deno.remove(dir, { recursive: true });
console.log(JSON.stringify({ committed, seconds: elapsed, perSecond: committed / elapsed }));
