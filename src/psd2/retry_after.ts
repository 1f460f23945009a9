/**
 * The Retry-After values of the gateway's own answers, one per cause, so that the code, the README's
 * error table and the tests say the same thing.
 */

/** Seconds a client is asked to wait, by the cause of the answer. */
export const RETRY_AFTER_SECONDS = {
  /** 503 STORE_UNAVAILABLE under `fail: closed`: a Redis failover or restart takes seconds. */
  storeUnavailable: 2,
  /** 503 UPSTREAM_UNAVAILABLE or UPSTREAM_TIMEOUT: the core did not answer in time or at all. */
  upstreamUnavailable: 5,
  /** 503 UPSTREAM_UNAVAILABLE from `bearer_token`: the JWKS could not be fetched. */
  keysUnavailable: 5,
  /** 503 UPSTREAM_UNAVAILABLE from `upstream_limits`: every slot towards the core is taken. */
  upstreamBusy: 1,
  /** 409 STATUS_INVALID: the first request with this X-Request-ID is still in flight. */
  inFlight: 1,
} as const;

/**
 * The Retry-After value of a wait in milliseconds (a rate limit's or a daily counter's): whole
 * seconds, rounded up, at least 1.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { retryAfter } from "./retry_after.ts";
 *
 * assert.equal(retryAfter(1200), "2");
 * assert.equal(retryAfter(0), "1");
 * ```
 */
export function retryAfter(ms: number): string {
  return String(Math.max(1, Math.ceil(ms / 1000)));
}
