/**
 * Masking of PSU identifiers and account numbers for logs: enough to correlate, never the value.
 */

/** Keeps the first and last two characters of values longer than 6, else hides all. */
export function mask(value: string): string {
  return value.length > 6 ? `${value.slice(0, 2)}***${value.slice(-2)}` : "***";
}

/** Path parameters that identify a PSU's account or transaction and are masked in logs. */
export const MASKED_PARAMS = ["account-id", "transactionId"];

/**
 * The request path with account identifiers masked, segment by segment: the segments where the
 * operation's path template has a masked parameter are replaced whatever they contain (a search
 * for the value would mask an earlier segment that happens to contain it, and log the id).
 */
export function maskedPath(
  path: string,
  template: string,
  params: Record<string, string> | undefined,
): string {
  if (!params) return path;
  const positions = maskedSegments(template);
  if (positions.length === 0) return path;
  // One pass over the path's slashes, copying what lies between the masked segments.
  let out = "";
  let copied = 0;
  let index = 0;
  let start = 0;
  for (const [position, name] of positions) {
    while (index < position) {
      const slash = path.indexOf("/", start);
      if (slash < 0) return out + path.slice(copied);
      start = slash + 1;
      index++;
    }
    const end = path.indexOf("/", start);
    out += path.slice(copied, start) + mask(params[name] ?? "");
    copied = end < 0 ? path.length : end;
  }
  return out + path.slice(copied);
}

/**
 * A path no operation matched (a 404 or 405), masked segment by segment: every segment that is not
 * one of `known` (the literal segments of the interface's paths) is masked, since a path sent to
 * the wrong place may hold an IBAN, an account id or a PSU's identifier all the same.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { maskedUnknownPath } from "./mask.ts";
 *
 * assert.equal(
 *   maskedUnknownPath("/v1/accounts/GE42SB0000000101904917/x", new Set(["v1", "accounts"])),
 *   "/v1/accounts/GE***17/***",
 * );
 * ```
 */
export function maskedUnknownPath(path: string, known: ReadonlySet<string>): string {
  return path.split("/").map((part) => part === "" || known.has(part) ? part : mask(part))
    .join("/");
}

const segmentsByTemplate = new Map<string, [number, string][]>();

/** The segment indices of a template that hold masked parameters (ascending), and their names. */
function maskedSegments(template: string): [number, string][] {
  let positions = segmentsByTemplate.get(template);
  if (!positions) {
    positions = [];
    template.split("/").forEach((part, index) => {
      const name = part.startsWith("{") ? part.slice(1, -1) : "";
      if (MASKED_PARAMS.includes(name)) positions!.push([index, name]);
    });
    segmentsByTemplate.set(template, positions);
  }
  return positions;
}

/**
 * An error as a log may show it: URLs (which carry account ids in their paths and credentials in
 * their user part) are replaced, whatever library produced the message.
 */
export function errorText(error: unknown): string {
  let text = String(error);
  for (let cause = (error as { cause?: unknown })?.cause, depth = 0; cause && depth < 3; depth++) {
    text += ` (cause: ${String(cause)})`;
    cause = (cause as { cause?: unknown })?.cause;
  }
  return text.replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, "<url>");
}
