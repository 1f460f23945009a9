/**
 * A dependency-free well-formedness check for the XML bodies of the `pain.001-*` products: one
 * root element (`Document`, as in every pain.001 message), balanced and properly nested tags,
 * attributes quoted and unique, only the predefined and numeric entity references, no document
 * type declaration (so no entity expansion or external entities), no XInclude and no schema
 * location hints (so nothing a parser or validator behind the gateway would fetch or include), and
 * a bounded nesting depth. It validates; it never builds a tree.
 */

import { hasXmlForbidden } from "../lib/controls.ts";

const NAME_START = "A-Za-z_:\\u00C0-\\u00D6\\u00D8-\\u00F6\\u00F8-\\u02FF\\u0370-\\u037D" +
  "\\u037F-\\u1FFF\\u200C\\u200D\\u2070-\\u218F\\u2C00-\\u2FEF\\u3001-\\uD7FF\\uF900-\\uFDCF" +
  "\\uFDF0-\\uFFFD";
const NAME_CHAR = `${NAME_START}\\-.0-9\\u00B7\\u0300-\\u036F\\u203F\\u2040`;
const NAME = `[${NAME_START}][${NAME_CHAR}]*`;

const DECLARATION = new RegExp(
  `^<\\?xml[ \\t\\r\\n]+version[ \\t\\r\\n]*=[ \\t\\r\\n]*("1\\.[0-9]+"|'1\\.[0-9]+')` +
    `(?:[ \\t\\r\\n]+encoding[ \\t\\r\\n]*=[ \\t\\r\\n]*(?:"([A-Za-z][A-Za-z0-9._-]*)"|'([A-Za-z][A-Za-z0-9._-]*)'))?` +
    `(?:[ \\t\\r\\n]+standalone[ \\t\\r\\n]*=[ \\t\\r\\n]*(?:"(?:yes|no)"|'(?:yes|no)'))?` +
    `[ \\t\\r\\n]*\\?>`,
);
const START_TAG = new RegExp(`<(${NAME})`, "y");
const ATTRIBUTE = new RegExp(
  `[ \\t\\r\\n]+(${NAME})[ \\t\\r\\n]*=[ \\t\\r\\n]*("[^"<]*"|'[^'<]*')`,
  "y",
);
const TAG_END = /[ \t\r\n]*(\/?)>/y;
const END_TAG = new RegExp(`</(${NAME})[ \\t\\r\\n]*>`, "y");
const PI = new RegExp(`<\\?(${NAME})(?:[ \\t\\r\\n][\\s\\S]*?)?\\?>`, "y");
const COMMENT = /<!--((?:[^-]|-(?!-))*)-->/y;
const CDATA = /<!\[CDATA\[[\s\S]*?\]\]>/y;
const REFERENCE = /&(?:(lt|gt|amp|apos|quot)|#([0-9]{1,7})|#x([0-9a-fA-F]{1,6}));/g;
const STRAY_AMPERSAND = /&(?!(?:lt|gt|amp|apos|quot|#[0-9]{1,7}|#x[0-9a-fA-F]{1,6});)/;

function allowedCode(code: number): boolean {
  return code === 0x9 || code === 0xA || code === 0xD || (code >= 0x20 && code <= 0xD7FF) ||
    (code >= 0xE000 && code <= 0xFFFD) || (code >= 0x10000 && code <= 0x10FFFF);
}

/** What is wrong with the references in character data or an attribute value, or `undefined`. */
function referenceProblem(text: string): string | undefined {
  if (!text.includes("&")) return undefined;
  if (STRAY_AMPERSAND.test(text)) {
    return "uses an entity other than &lt; &gt; &amp; &apos; &quot; or a character reference";
  }
  for (const match of text.matchAll(REFERENCE)) {
    const code = match[2] ? Number(match[2]) : match[3] ? parseInt(match[3], 16) : undefined;
    if (code !== undefined && !allowedCode(code)) return "refers to a character not allowed in XML";
  }
  return undefined;
}

/** Namespaces of XInclude: the recommendation's and the 2003 draft's, which parsers still know. */
const XINCLUDE = ["http://www.w3.org/2001/xinclude", "http://www.w3.org/2003/xinclude"];
/** Attributes (local names) that point a validator at a schema document to fetch. */
const SCHEMA_LOCATIONS = ["schemaLocation", "noNamespaceSchemaLocation"];
const PREDEFINED: Record<string, string> = { lt: "<", gt: ">", amp: "&", apos: "'", quot: '"' };

/** An attribute value as a parser sees it: references replaced, whitespace made spaces. */
function attributeValue(quoted: string): string {
  return quoted.slice(1, -1).replace(/[\t\r\n]/g, " ").replace(
    REFERENCE,
    (_, name?: string, decimal?: string, hex?: string) =>
      name
        ? PREDEFINED[name]
        : String.fromCodePoint(decimal ? Number(decimal) : parseInt(hex!, 16)),
  );
}

/** What an attribute asks a parser or validator to fetch or include, or `undefined`. */
function fetchProblem(name: string, quoted: string, allowSchemaLocation: boolean) {
  if (name === "xmlns" || name.startsWith("xmlns:")) {
    const namespace = attributeValue(quoted).trim().toLowerCase();
    if (XINCLUDE.includes(namespace)) return "The XML body must not use XInclude";
  } else if (!allowSchemaLocation && SCHEMA_LOCATIONS.includes(localName(name))) {
    return `The XML body must not carry the schema location attribute "${name}"`;
  }
  return undefined;
}

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x9 || code === 0xa || code === 0xd;
}

function localName(name: string): string {
  return name.slice(name.indexOf(":") + 1);
}

function at(re: RegExp, text: string, index: number): RegExpExecArray | null {
  re.lastIndex = index;
  return re.exec(text);
}

/**
 * What makes `text` not a well-formed pain.001 document, as a sentence, or `undefined`.
 * `allowSchemaLocation` lets `xsi:schemaLocation` and `xsi:noNamespaceSchemaLocation` through.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { xmlProblem } from "./xml.ts";
 *
 * const pain001 = "urn:iso:std:iso:20022:tech:xsd:pain.001.001.03";
 * assert.equal(xmlProblem(`<Document xmlns="${pain001}"/>`, 64), undefined);
 * assert.equal(typeof xmlProblem(`<Document xmlns="${pain001}">`, 64), "string");
 * ```
 */
export function xmlProblem(
  text: string,
  maxDepth: number,
  options: { allowSchemaLocation?: boolean } = {},
): string | undefined {
  if (hasXmlForbidden(text)) return "The XML body contains a character not allowed in XML";
  let i = text.charCodeAt(0) === 0xFEFF ? 1 : 0;
  const declaration = DECLARATION.exec(text.slice(i, i + 300));
  if (declaration) {
    const encoding = declaration[2] ?? declaration[3];
    if (encoding && encoding.toLowerCase() !== "utf-8") {
      return `The XML body must be encoded in UTF-8, not "${encoding}"`;
    }
    i += declaration[0].length;
  } else if (text.startsWith("<?xml", i) && /^<\?xml[ \t\r\n?]/.test(text.slice(i, i + 6))) {
    return "The XML declaration is malformed";
  }
  const stack: string[] = [];
  let root: string | undefined;
  let done = false;
  while (i < text.length) {
    if (stack.length === 0) {
      while (i < text.length && isSpace(text.charCodeAt(i))) i++;
      if (i >= text.length) break;
    }
    const ch = text[i];
    if (ch !== "<") {
      if (stack.length === 0) return "The XML body has text outside the root element";
      const stop = text.indexOf("<", i);
      const chunk = text.slice(i, stop < 0 ? text.length : stop);
      if (chunk.includes("]]>")) return 'The XML body has "]]>" in character data';
      const problem = referenceProblem(chunk);
      if (problem) return `The XML body's character data ${problem}`;
      i += chunk.length;
      continue;
    }
    const next = text[i + 1];
    if (next === "!") {
      if (text.startsWith("<!--", i)) {
        const comment = at(COMMENT, text, i);
        if (!comment || comment[1].endsWith("-")) return "The XML body has a malformed comment";
        i += comment[0].length;
      } else if (text.startsWith("<![CDATA[", i)) {
        if (stack.length === 0) return "The XML body has a CDATA section outside the root element";
        const cdata = at(CDATA, text, i);
        if (!cdata) return "The XML body has an unterminated CDATA section";
        i += cdata[0].length;
      } else if (text.startsWith("<!DOCTYPE", i)) {
        return "The XML body must not contain a document type declaration (DOCTYPE)";
      } else {
        return "The XML body has a malformed markup declaration";
      }
      continue;
    }
    if (next === "?") {
      // The declaration was read above; any other instruction (xml-stylesheet, ...) asks the
      // core's parser to act on something the checks cannot judge.
      const pi = at(PI, text, i);
      if (!pi || pi[1].toLowerCase() === "xml") {
        return "The XML body has a malformed processing instruction";
      }
      return `The XML body must not contain a processing instruction ("<?${pi[1]}")`;
    }
    if (next === "/") {
      const end = at(END_TAG, text, i);
      if (!end) return "The XML body has a malformed end tag";
      const open = stack.pop();
      if (open !== end[1]) {
        return open === undefined
          ? `The XML body has an end tag "</${end[1]}>" without a start tag`
          : `The XML body closes "<${open}>" with "</${end[1]}>"`;
      }
      i += end[0].length;
      if (stack.length === 0) done = true;
      continue;
    }
    if (done) return "The XML body must have exactly one root element";
    const start = at(START_TAG, text, i);
    if (!start) return "The XML body has a malformed start tag";
    const name = start[1];
    i += start[0].length;
    const seen = new Set<string>();
    for (let attribute = at(ATTRIBUTE, text, i); attribute; attribute = at(ATTRIBUTE, text, i)) {
      if (seen.has(attribute[1])) {
        return `The XML body repeats the attribute "${attribute[1]}" of "<${name}>"`;
      }
      seen.add(attribute[1]);
      const problem = referenceProblem(attribute[2]);
      if (problem) return `The XML body's attribute "${attribute[1]}" ${problem}`;
      const fetched = fetchProblem(
        attribute[1],
        attribute[2],
        options.allowSchemaLocation ?? false,
      );
      if (fetched) return fetched;
      i += attribute[0].length;
    }
    const close = at(TAG_END, text, i);
    if (!close) return `The XML body has a malformed start tag "<${name}"`;
    i += close[0].length;
    if (name === "xi:include") return "The XML body must not use XInclude";
    root ??= name;
    if (close[1] === "/") {
      if (stack.length === 0) done = true;
    } else {
      stack.push(name);
      if (stack.length > maxDepth) return `The XML body must not nest deeper than ${maxDepth}`;
    }
  }
  if (stack.length > 0) return `The XML body does not close "<${stack[stack.length - 1]}>"`;
  if (root === undefined) return "The XML body must have a root element";
  if (localName(root) !== "Document") {
    return `The XML body must have the pain.001 root element "Document", not "${root}"`;
  }
  return undefined;
}
