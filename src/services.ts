/**
 * The dependencies the app is built with (fetch, clock, log, store), so that tests pass their own.
 */
import { MemoryStore } from "./store/memory.ts";
import { createStore, type Store } from "./store/mod.ts";
import { fetchUpstream } from "./upstream/fetch.ts";
import { createUpstream, type Upstream } from "./upstream/mod.ts";
import type { PolicySections } from "./sections.ts";

import { createMetrics, type Metrics } from "./metrics.ts";

/** One structured log line. */
export type LogEntry = Record<string, unknown>;

/** Where log lines go: JSON lines on stdout in production, an array in tests. */
export interface Logger {
  info(entry: LogEntry): void;
  error(entry: LogEntry): void;
}

/** Everything the checks and the proxy need from the outside world. */
export interface Services {
  fetch: typeof fetch;
  log: Logger;
  /** Milliseconds since the epoch. */
  now(): number;
  /** Shared state (idempotency, rate limits, consent frequency); see `createStore`. */
  store: Store;
  /** The client the proxy forwards with; see `createUpstream`. */
  upstream: Upstream;
  metrics: Metrics;
}

/**
 * Collects lines and writes them in batches (one write per batch, at the latest `delayMs` after
 * the first line), so that a busy gateway does not pay one system call per request.
 */
function batchedWriter(file: { writeSync(bytes: Uint8Array): number }, delayMs = 20) {
  const encoder = new TextEncoder();
  let pending: string[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  function flush() {
    clearTimeout(timer);
    timer = undefined;
    if (pending.length === 0) return;
    let bytes = encoder.encode(pending.join(""));
    pending = [];
    while (bytes.byteLength > 0) bytes = bytes.subarray(file.writeSync(bytes));
  }
  globalThis.addEventListener("unload", flush);
  return (line: string) => {
    pending.push(line + "\n");
    if (pending.length >= 256) flush();
    else timer ??= setTimeout(flush, delayMs);
  };
}

/** A logger writing one JSON object per line: info to stdout (batched), errors to stderr. */
export function jsonLogger(): Logger {
  const write = batchedWriter(Deno.stdout);
  return {
    info: (entry) => write(JSON.stringify(entry)),
    error: (entry) => console.error(JSON.stringify({ level: "error", ...entry })),
  };
}

/** A logger that keeps its lines, for tests and tools. */
export function memoryLogger(): Logger & { lines: LogEntry[] } {
  const lines: LogEntry[] = [];
  return {
    lines,
    info: (entry) => lines.push({ level: "info", ...entry }),
    error: (entry) => lines.push({ level: "error", ...entry }),
  };
}

/** The real services. */
export function defaultServices(overrides: Partial<Services> = {}): Services {
  return {
    fetch: globalThis.fetch,
    log: overrides.log ?? jsonLogger(),
    now: Date.now,
    metrics: createMetrics(),
    ...overrides,
    store: overrides.store ?? new MemoryStore(),
    upstream: overrides.upstream ?? fetchUpstream(overrides.fetch ?? globalThis.fetch),
  };
}

/**
 * The services with the store and the upstream client the policy's sections name, for a server
 * (main.ts) or a `deno serve` worker alike. Both live as long as it: a reload keeps the shared
 * state and the connections (a changed `store` or `upstream.client` takes effect at the next start).
 */
export async function withPolicyClients(
  sections: Pick<PolicySections, "store" | "upstream">,
  services: Services,
): Promise<Services> {
  const store = await createStore(sections.store, { log: services.log });
  return { ...services, store, upstream: createUpstream(sections.upstream, services.fetch) };
}
