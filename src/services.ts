/**
 * The dependencies the app is built with (fetch, clock, log, store), so that tests pass their own.
 */
import { MemoryStore } from "./store/memory.ts";
import type { Store } from "./store/mod.ts";

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
}

/** A logger writing one JSON object per line to stdout (info) or stderr (error). */
export function jsonLogger(): Logger {
  return {
    info: (entry) => console.log(JSON.stringify({ level: "info", ...entry })),
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
    log: jsonLogger(),
    now: Date.now,
    ...overrides,
    store: overrides.store ?? new MemoryStore(),
  };
}
