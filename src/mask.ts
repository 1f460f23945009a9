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
  const parts = template.split("/");
  let segments: string[] | undefined;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (part.charCodeAt(0) !== 123 /* { */) continue;
    const name = part.slice(1, -1);
    if (!MASKED_PARAMS.includes(name)) continue;
    segments ??= path.split("/");
    segments[i] = mask(params[name] ?? "");
  }
  return segments ? segments.join("/") : path;
}

/**
 * An error as a log may show it: URLs (which carry account ids in their paths and credentials in
 * their user part) are replaced, whatever library produced the message.
 */
export function errorText(error: unknown): string {
  return String(error).replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, "<url>");
}
