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
 */
export const V8_FLAGS = "--v8-flags=--no-allocation-site-pretenuring";
