/**
 * What the proxy makes of a core's 5xx (option `core_errors`): by default the gateway's own Berlin
 * Group error, because the core's body is often an HTML stack trace or a framework's error page
 * that names internal hosts, classes and queries. The core's body goes to the log, cut short.
 */
import { type Answer, errorAnswer } from "../src/core/answer.ts";
import { GatewayError } from "../src/psd2/errors.ts";
import { RETRY_AFTER_SECONDS } from "../src/psd2/retry_after.ts";
import type { Bytes } from "../src/lib/body.ts";

/** Characters of the core's body the log keeps. */
export const LOGGED_BODY_CHARS = 2048;

/** Statuses that say "the core is unavailable, try later" (RFC 9110 15.6.3 to 15.6.5). */
const UNAVAILABLE = new Set([502, 503, 504]);

/** Retry-After as delay-seconds (at most a day: a larger one is no plan a TPP can follow). */
const DELAY_SECONDS = /^[0-9]{1,5}$/;
/** Retry-After as an HTTP-date in the preferred format (RFC 9110 5.6.7 IMF-fixdate). */
const IMF_DATE =
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), [0-9]{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$/;

/** The core's Retry-After when it is one a client can act on, else `undefined`. */
export function validRetryAfter(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (DELAY_SECONDS.test(trimmed)) return Number(trimmed) <= 86_400 ? trimmed : undefined;
  return IMF_DATE.test(trimmed) && !Number.isNaN(Date.parse(trimmed)) ? trimmed : undefined;
}

/**
 * The gateway's answer to a core's 5xx: 503 UPSTREAM_UNAVAILABLE for 502, 503 and 504 (with the
 * core's Retry-After when valid, the gateway's otherwise), 500 INTERNAL_ERROR for the others.
 */
export function coreErrorAnswer(status: number, retryAfter: string | undefined): Answer {
  if (UNAVAILABLE.has(status)) {
    return errorAnswer(
      new GatewayError(503, "UPSTREAM_UNAVAILABLE", "The bank is unavailable, try again later", {
        headers: {
          "retry-after": validRetryAfter(retryAfter) ??
            String(RETRY_AFTER_SECONDS.upstreamUnavailable),
        },
      }),
    );
  }
  return errorAnswer(
    new GatewayError(500, "INTERNAL_ERROR", "The bank failed to process the request"),
  );
}

const decoder = new TextDecoder();

/** The start of the core's body for the log (decoded leniently; empty for none). */
export function loggedBody(body: Bytes): string {
  const text = decoder.decode(body.subarray(0, LOGGED_BODY_CHARS * 4));
  return text.length > LOGGED_BODY_CHARS ? text.slice(0, LOGGED_BODY_CHARS) + "..." : text;
}
