/**
 * Masking of PSU identifiers and account numbers for logs: enough to correlate, never the value.
 */

/** Keeps the first and last two characters of values longer than 6, else hides all. */
export function mask(value: string): string {
  return value.length > 6 ? `${value.slice(0, 2)}***${value.slice(-2)}` : "***";
}

/** Path parameters that identify a PSU's account or transaction and are masked in logs. */
export const MASKED_PARAMS = ["account-id", "transactionId"];

/** The request path with account identifiers masked. */
export function maskedPath(path: string, params: Record<string, string> | undefined): string {
  if (!params) return path;
  let out = path;
  for (const name of MASKED_PARAMS) {
    const value = params[name];
    if (value) out = out.replace(encodeURIComponent(value), mask(value));
  }
  return out;
}

/**
 * An error as a log may show it: URLs (which carry account ids in their paths and credentials in
 * their user part) are replaced, whatever library produced the message.
 */
export function errorText(error: unknown): string {
  return String(error).replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, "<url>");
}
