/**
 * The field types of the policy file, shared by every check's options and by the global sections
 * (Kong's `typedefs.lua`): each kind of value is written one way everywhere, checked one way and
 * explained by one message.
 *
 * - Durations are a whole number and a unit: `500ms`, `10s`, `5m`, `24h`, `400d`. They parse to
 *   milliseconds, and their option names carry no unit (`timeout`, not `timeout_ms`). A bare
 *   number is refused: it would leave the unit to be guessed.
 * - Sizes are whole numbers of bytes, named `*_bytes`; counts are whole numbers, named `max_*`.
 * - Ports, http(s) URLs, header names, media types and path prefixes have one field each.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { z } from "zod";
 * import { duration, TIMER_MAX } from "./fields.ts";
 *
 * const options = z.object({ timeout: duration({ max: TIMER_MAX }).prefault("10s") });
 * assert.equal(options.parse({}).timeout, 10_000);
 * assert.equal(options.parse({ timeout: "500ms" }).timeout, 500);
 * assert.throws(() => options.parse({ timeout: 500 })); // a bare number: the unit is missing
 * ```
 */
import { z } from "zod";

const UNITS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** A duration's text: a whole number and a unit. */
export type DurationText = `${number}${keyof typeof UNITS}`;

const DURATION = /^(0|[1-9][0-9]*)(ms|s|m|h|d)$/;

/** The longest duration a timer can wait (2^31 - 1 ms; a longer one would fire at once). */
export const TIMER_MAX: DurationText = "24d";

/**
 * The milliseconds of a duration text such as `500ms` or `24h`, or `undefined` when the text is
 * not one.
 */
export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text);
  if (!match) return undefined;
  const ms = Number(match[1]) * UNITS[match[2] as keyof typeof UNITS];
  return Number.isSafeInteger(ms) ? ms : undefined;
}

const DURATION_HINT = 'a duration with a unit, such as "500ms", "10s", "5m" or "24h"';

/**
 * A duration such as `500ms`, `30s`, `5m`, `24h` or `1d`, in milliseconds; at least `min`
 * (default `1ms`, so zero only where `min` is `0s`) and at most `max` when given.
 */
export function duration(bounds: { min?: DurationText; max?: DurationText } = {}) {
  const min = bounds.min ?? "1ms";
  const low = parseDuration(min)!;
  const high = bounds.max === undefined ? undefined : parseDuration(bounds.max)!;
  return z.string({
    error: (issue) =>
      issue.input === undefined
        ? undefined
        : `must be ${DURATION_HINT}, got ${JSON.stringify(issue.input)}`,
  }).regex(DURATION, {
    error: (issue) => `must be ${DURATION_HINT}, got ${JSON.stringify(issue.input)}`,
  }).transform((text, context) => {
    const ms = parseDuration(text);
    const problem = ms === undefined
      ? `must be a shorter duration, got "${text}"`
      : ms < low
      ? `must be at least ${min}, got "${text}"`
      : high !== undefined && ms > high
      ? `must be at most ${bounds.max}, got "${text}"`
      : undefined;
    if (problem) context.addIssue({ code: "custom", message: problem });
    return ms!;
  });
}

/**
 * A TCP port from the policy or the environment (a number, or digits in a string); with
 * `anyFree`, `0` asks the system for a free port.
 */
export function port(options: { anyFree?: boolean } = {}) {
  const low = options.anyFree ? 0 : 1;
  const message = `must be a port number (${low} to 65535)`;
  return z.union([z.int(), z.string().regex(/^[0-9]{1,5}$/).transform(Number)], { error: message })
    .pipe(z.int().min(low, message).max(65535, message));
}

/** An absolute http or https URL. */
export function httpUrl() {
  return z.url({ protocol: /^https?$/, error: "must be an http or https URL" });
}

/** An HTTP header name as the policy may write it: letters, digits and `-`. */
export function headerName() {
  return z.string().regex(/^[A-Za-z0-9-]+$/, "must be a header name (letters, digits and -)");
}

/** A media type in lower case, such as `application/json`. */
export function mediaType() {
  return z.string().regex(
    /^[a-z0-9.+-]+\/[a-z0-9.+-]+$/,
    "must be a media type in lower case, such as application/json",
  );
}

/** A size in bytes: a whole number, at least 1. */
export function byteSize() {
  return z.int({ error: "must be a whole number of bytes" }).positive(
    "must be at least 1 byte",
  );
}

/**
 * Whether a path holds a `.` or `..` segment, also percent-encoded (`%2e`) or behind an encoded
 * `/` or `\` (`%2f`, `%5c`), which a server on the way may decode and resolve.
 */
export function hasDotSegment(path: string): boolean {
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    // A stray % decodes nowhere; its segments are compared as written.
  }
  return [path, decoded].some((text) =>
    text.split(/[/\\]/).some((segment) => segment === "." || segment === "..")
  );
}

const NO_DOT_SEGMENTS = {
  error: (issue: { input?: unknown }) =>
    `must not contain a . or .. segment (also percent-encoded), got ${JSON.stringify(issue.input)}`,
};

/**
 * A path prefix such as `/psd2/v1`: segments of unreserved characters, no dot segments;
 * `optional: true` also accepts `""` (no prefix).
 */
export function pathPrefix(options: { optional?: boolean } = {}) {
  const shape = options.optional ? /^(\/[A-Za-z0-9._~-]+)*$/ : /^(\/[A-Za-z0-9._~-]+)+$/;
  return z.string().regex(shape, "must be a path prefix such as /psd2/v1")
    .refine((path) => !hasDotSegment(path), NO_DOT_SEGMENTS);
}

/** A path template such as `/v1/accounts/{account-id}`: starts with `/`, no dot segments. */
export function pathTemplate() {
  return z.string().startsWith("/", "must start with /")
    .refine((path) => !hasDotSegment(path), NO_DOT_SEGMENTS);
}
