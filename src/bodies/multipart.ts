/**
 * multipart/form-data bodies (RFC 7578, RFC 2046 5.1), as the Berlin Group sends a periodic
 * pain.001 initiation: a `xml_sct` part (the pain.001 document) and a `json_standingorderType`
 * part (the schedule). The parser is strict where a lenient one would let the gateway and the
 * bank see different parts: CRLF line breaks, every part named once, no part after the closing
 * delimiter, a bounded number of parts. It reads a text already decoded; it never buffers more.
 */

/** One part: its form field name, its media type (lower case essence) and its content. */
export interface Part {
  name: string;
  /** The part's Content-Type, as sent; `undefined` when the part has none. */
  contentType?: string;
  text: string;
}

/** The parts of a body, or what makes it malformed (the end of a sentence after "The body"). */
export type Multipart = { parts: Part[] } | { problem: string };

/** RFC 2046: 1 to 70 characters from a restricted set, not ending in a space. */
const BOUNDARY = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const PARAM = /^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;\s"]*)\s*$/;

/** The most parts a body may have (the Berlin Group form has two). */
export const MAX_PARTS = 8;

/** Whether a boundary parameter is one RFC 2046 allows. */
export function validBoundary(boundary: string): boolean {
  return BOUNDARY.test(boundary);
}

/** `form-data; name="xml_sct"; filename="a.xml"` to its name, or a problem. */
function dispositionName(value: string): { name: string } | { problem: string } {
  const [kind, ...params] = value.split(";");
  if (kind.trim().toLowerCase() !== "form-data") {
    return { problem: 'has a part whose "Content-Disposition" is not form-data' };
  }
  let name: string | undefined;
  for (const param of params) {
    const match = PARAM.exec(param);
    if (!match) return { problem: 'has a part with a malformed "Content-Disposition"' };
    if (match[1].toLowerCase() !== "name") continue;
    if (name !== undefined) return { problem: "has a part named twice" };
    name = match[2].startsWith('"') ? match[2].slice(1, -1).replace(/\\(.)/g, "$1") : match[2];
  }
  return name ? { name } : { problem: 'has a part without a name in "Content-Disposition"' };
}

/**
 * The transfer encodings a part may declare: those that leave the bytes as they are. Any other
 * (quoted-printable, base64) would have the core's MIME parser decode what the checks never saw
 * (RFC 7578 4.7 deprecates the header).
 */
const IDENTITY_ENCODINGS = new Set(["7bit", "8bit", "binary"]);

/**
 * The headers of one part: Content-Disposition (required), Content-Type (optional), and
 * Content-Transfer-Encoding only as an identity encoding.
 */
function partHead(head: string): { name: string; contentType?: string } | { problem: string } {
  let disposition: string | undefined;
  let contentType: string | undefined;
  let encoding: string | undefined;
  for (const line of head === "" ? [] : head.split("\r\n")) {
    const colon = line.indexOf(":");
    const field = line.slice(0, colon).toLowerCase();
    if (colon <= 0 || !TOKEN.test(field)) return { problem: "has a malformed part header" };
    const value = line.slice(colon + 1).trim();
    if (field === "content-disposition") {
      if (disposition !== undefined) {
        return { problem: 'has a part with two "Content-Disposition"' };
      }
      disposition = value;
    } else if (field === "content-type") {
      if (contentType !== undefined) return { problem: 'has a part with two "Content-Type"' };
      contentType = value;
    } else if (field === "content-transfer-encoding") {
      if (encoding !== undefined) {
        return { problem: 'has a part with two "Content-Transfer-Encoding"' };
      }
      encoding = value;
      if (!IDENTITY_ENCODINGS.has(value.toLowerCase())) {
        return {
          problem:
            `has a part with "Content-Transfer-Encoding: ${value}"; only 7bit, 8bit and binary are accepted`,
        };
      }
    }
  }
  if (disposition === undefined) return { problem: 'has a part without "Content-Disposition"' };
  const named = dispositionName(disposition);
  return "problem" in named ? named : { name: named.name, contentType };
}

/**
 * Splits a multipart body into its parts.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseMultipart } from "./multipart.ts";
 *
 * assert.deepEqual(
 *   parseMultipart('--b\r\nContent-Disposition: form-data; name="a"\r\n\r\nx\r\n--b--', "b"),
 *   { parts: [{ name: "a", contentType: undefined, text: "x" }] },
 * );
 * ```
 */
export function parseMultipart(text: string, boundary: string): Multipart {
  const delimiter = `--${boundary}`;
  // The first delimiter starts the body or a line (a preamble before it is ignored, RFC 2046).
  let at = text.startsWith(delimiter) ? 0 : text.indexOf(`\r\n${delimiter}`);
  if (at < 0) return { problem: "does not contain the boundary of its Content-Type" };
  if (at > 0) at += 2;
  const parts: Part[] = [];
  const names = new Set<string>();
  const next = `\r\n${delimiter}`;
  for (;;) {
    let i = at + delimiter.length;
    if (text.startsWith("--", i)) {
      // The closing delimiter; what follows is an epilogue, which must be empty or one CRLF.
      const rest = text.slice(i + 2);
      if (rest !== "" && rest !== "\r\n") return { problem: "has content after its last part" };
      break;
    }
    while (text[i] === " " || text[i] === "\t") i++;
    if (!text.startsWith("\r\n", i)) return { problem: "has a malformed boundary line" };
    i += 2;
    const headEnd = text.startsWith("\r\n", i) ? i : text.indexOf("\r\n\r\n", i);
    if (headEnd < 0) return { problem: "has a part whose headers do not end" };
    const head = partHead(text.slice(i, headEnd));
    if ("problem" in head) return head;
    const start = headEnd + (headEnd === i ? 2 : 4);
    const end = text.indexOf(next, start);
    if (end < 0) return { problem: "ends before its closing boundary" };
    if (names.has(head.name)) return { problem: `has the part "${head.name}" more than once` };
    if (parts.length === MAX_PARTS) return { problem: `has more than ${MAX_PARTS} parts` };
    names.add(head.name);
    parts.push({ ...head, text: text.slice(start, end) });
    at = end + 2;
  }
  return { parts };
}
