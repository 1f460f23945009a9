/**
 * Media types of Content-Type and Accept, parsed just enough to compare them (RFC 9110 8.3.1,
 * 12.5.1): type and subtype case-insensitive, parameters as a map, `q` weights.
 */

import { memo } from "./memo.ts";

/** A parsed media type or media range (shared between the requests that send the same text). */
export interface MediaType {
  /** `type/subtype`, lower case. */
  readonly essence: string;
  readonly params: ReadonlyMap<string, string>;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Parses one media type like `application/json; charset=utf-8`; `undefined` if malformed. Each text
 * is parsed once: a TPP sends the same Content-Type and Accept on every request.
 */
export const parseMediaType: (text: string) => MediaType | undefined = memo(readMediaType);

function readMediaType(text: string): MediaType | undefined {
  const [head, ...rest] = text.split(";");
  const [type, subtype, extra] = head.trim().split("/");
  if (extra !== undefined || !type || !subtype || !TOKEN.test(type) || !TOKEN.test(subtype)) {
    return undefined;
  }
  const params = new Map<string, string>();
  for (const part of rest) {
    const at = part.indexOf("=");
    if (at < 0) {
      if (part.trim() === "") continue;
      return undefined;
    }
    const name = part.slice(0, at).trim().toLowerCase();
    let value = part.slice(at + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) {
      value = value.slice(1, -1);
    }
    if (!TOKEN.test(name)) return undefined;
    params.set(name, value);
  }
  return { essence: `${type}/${subtype}`.toLowerCase(), params };
}

/**
 * Whether a Content-Type names JSON: `application/json` or any `+json` type, in any case and with
 * any parameters (`Application/JSON; charset=UTF-8`). A malformed or absent value is not JSON.
 */
export function isJson(contentType: string | null | undefined): boolean {
  if (!contentType) return false;
  const essence = parseMediaType(contentType)?.essence;
  if (essence === undefined) return false;
  const subtype = essence.slice(essence.indexOf("/") + 1);
  return subtype === "json" || subtype.endsWith("+json");
}

/** Whether a media range of an Accept header (`*\/*`, `application/*`, ...) covers a type. */
export function rangeCovers(range: string, essence: string): boolean {
  if (range === "*/*" || range === essence) return true;
  return range.endsWith("/*") && essence.startsWith(range.slice(0, -1));
}

/** Whether an Accept header value lets the server answer with one of `produced`. */
export function acceptable(accept: string, produced: readonly string[]): boolean {
  for (const item of accept.split(",")) {
    if (item.trim() === "") continue;
    const range = parseMediaType(item);
    if (!range) continue;
    const q = range.params.get("q");
    if (q !== undefined && !(Number(q) > 0)) continue;
    if (produced.some((essence) => rangeCovers(range.essence, essence))) return true;
  }
  return false;
}
