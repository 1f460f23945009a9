/**
 * The V8 flags the gateway runs with: in `deno task start`, `serve` and `compile`, the Dockerfile,
 * the benchmark and the soak (tests/src/v8_flags_test.ts keeps them in step).
 *
 * `--no-allocation-site-pretenuring`: V8 learns from early collections which allocation sites
 * produce long-lived objects and then allocates their objects in the old generation directly. In a
 * proxy with requests in flight across every await, it learns the wrong lesson about per-request
 * objects (headers, bodies, contexts): they are then born old, die young, and fill the old
 * generation with garbage that only full collections reclaim. Measured on the passthrough GET
 * (docs/performance.md): scavenge pauses 11-12 -> 7 us per request, bytes promoted 2.7 -> 1.4 KB
 * per request, server CPU per request about a quarter lower; the bare proxy is unaffected.
 *
 * `--no-memory-reducer`: when the allocation rate drops (a lull in traffic), V8's memory reducer
 * runs full collections that shrink the heap and throw away compiled code; the first seconds of
 * traffic after the lull then run cold. Measured after 40 s idle (docs/performance.md): the
 * passthrough GET's first 2 s of load cost 250-330 us CPU per request instead of 120-140, the bare
 * proxy's barely change. The price: an idle gateway keeps the heap its last peak needed (about
 * 215 MB resident instead of 100 MB after the benchmark's load) instead of returning it.
 *
 * `--heap-growing-percent=100`: after a full collection V8 lets the old generation grow by a factor
 * it picks from the recent allocation rate; after a lull it picks a small one, and the first
 * seconds of traffic run full collections back to back, whose pauses grow with the live heap (the
 * memory store's X-Request-IDs: 12 and 15 ms with 400,000). With the factor fixed at 2, measured
 * after 40 s idle (docs/performance.md, "The process's V8 flags"): the write row's p99 in the
 * first 4 s 3.7 to 5.4 ms instead of 6.8 to 10.5. The price: the heap may reach twice its live
 * size before a full collection.
 */
export const V8_FLAGS =
  "--v8-flags=--no-allocation-site-pretenuring,--no-memory-reducer,--heap-growing-percent=100";
