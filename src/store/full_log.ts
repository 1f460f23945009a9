/**
 * How a bounded store (the memory store) tells that it is full: every refused write is counted,
 * and the first refusal of each interval is logged with its cause and the refusals since the
 * previous line, so that a full store is heard at once without a line per request.
 */
import type { Logger } from "../lib/log.ts";

/** Least time between two "store full" lines, in milliseconds. */
export const FULL_LOG_INTERVAL_MS = 60_000;

/**
 * How long after its last refused write a store still counts as full (readiness says degraded):
 * a store that refuses one write in ten is full for the callers of that one.
 */
export const FULL_HOLD_MS = 60_000;

/** The refusals of a bounded store, and the log lines they make. */
export class FullLog {
  /** Writes refused since the start. */
  refused = 0;
  #unlogged = 0;
  #lastLine = -Infinity;
  #last?: { at: number; cause: string };

  /** `msg`: the log line's message (a refusal that is not a full store says what it is). */
  constructor(
    readonly store: string,
    readonly log?: Logger,
    readonly msg = "store full, writes refused",
  ) {}

  /**
   * Counts a refused write at `now`; logs it when no line was written in the last interval, with
   * the cause, what `detail` adds (the store's figures) and the refusals since the last line.
   */
  refuse(now: number, cause: string, detail: () => Record<string, unknown>): void {
    this.refused++;
    this.#unlogged++;
    this.#last = { at: now, cause };
    if (now - this.#lastLine < FULL_LOG_INTERVAL_MS) return;
    this.#lastLine = now;
    this.log?.error({
      msg: this.msg,
      store: this.store,
      cause,
      ...detail(),
      refused: this.#unlogged,
      refused_total: this.refused,
    });
    this.#unlogged = 0;
  }

  /** The cause of the last refusal while it is recent (within {@link FULL_HOLD_MS}), else undefined. */
  recent(now: number): string | undefined {
    return this.#last && now - this.#last.at < FULL_HOLD_MS ? this.#last.cause : undefined;
  }
}
