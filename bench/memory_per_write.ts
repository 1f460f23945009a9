/**
 * Memory per kept answer in the in-process store: `count` writes as the gateway makes them (a
 * claimed X-Request-ID of an identified TPP, then the bench upstream's 201 answer kept for
 * replay), then the store's own estimate per entry (what `store.max_bytes` counts) and the heap
 * it really took (after full collections). Prints one JSON line.
 *
 *   deno run --v8-flags=--expose-gc bench/memory_per_write.ts [count=200000]
 */
import { MemoryStore } from "../src/store/memory.ts";
import { CREATED_BODY } from "./upstream_answers.ts";

const count = Number(Deno.args[0] ?? 200_000);
const gc = (globalThis as unknown as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --v8-flags=--expose-gc");

/** The answer the gateway keeps for the bench's payment initiation (links rewritten to /v1). */
const answer = new TextEncoder().encode(CREATED_BODY.replaceAll("/psd2/v1", "/v1"));

const store = new MemoryStore({ maxEntries: count + 10, maxBytes: 2 ** 40 });
const heap = () => {
  gc!();
  gc!();
  return Deno.memoryUsage().heapUsed;
};
const before = heap();
for (let i = 0; i < count; i++) {
  // Fresh strings and arrays per write, as the gateway makes them (none shared between entries).
  const fingerprint = crypto.randomUUID() + "12345678"; // 44 characters, as a SHA-256 in base64
  const body = answer.slice().toBase64();
  const headers: [string, string][] = [["content-type", "application/json"]];
  const key = `idem:tpp-CN%3Dtpp.example:${crypto.randomUUID()}`;
  const token = crypto.randomUUID();
  await store.decide({
    idempotency: {
      key,
      mode: "replay",
      fingerprint,
      token,
      enforce: true,
      inflightMs: 60_000,
      retentionMs: 86_400_000,
    },
    limits: [],
  });
  await store.complete({
    key,
    token,
    action: "done",
    response: { status: 201, headers, body },
    retentionMs: 86_400_000,
  });
}
const after = heap();
console.log(JSON.stringify({
  count,
  entries: store.size,
  estimateBytesPerAnswer: Math.round(store.bytes / store.size),
  heapBytesPerAnswer: Math.round((after - before) / store.size),
  answerBodyBytes: answer.byteLength,
}));
await store.close();
