/**
 * `links`: on the way out, rewrites every `href` that points at the upstream (a legacy prefix such
 * as `/psd2/v1`, or an absolute URL of the upstream host) to the public prefix: the hyperlinks of
 * `_links` at any depth and of the checkout's `links[]`, and any other `href` member, so that no
 * internal address leaks. Links elsewhere (the bank's SCA pages, `approve`) stay as they are
 * unless a mapping says otherwise. A response with nothing to rewrite is passed through as it is.
 * The `Location` of an answer (any operation) is rewritten the same way, and an absolute one of any
 * origin whose path lies under an upstream prefix becomes the public path: it names the API,
 * never another site, and an internal host name must not leak.
 */
import { z } from "zod";
import { defineCheck } from "../src/core/check.ts";
import { type Answer, answerText, changed, isJsonAnswer } from "../src/core/answer.ts";
import type { Services } from "../src/core/services.ts";
import { pathPrefix } from "../src/lib/fields.ts";

/** Rewrites one href, or returns it unchanged. */
export type HrefRewriter = (href: string) => string;

/** Options of {@link hrefRewriter}. */
export interface RewriteRules {
  /** Upstream path prefixes, for example `/psd2/v1`. */
  prefixes: readonly string[];
  /** The public prefix they become, for example `/v1`. */
  publicPrefix: string;
  /** Origins of the upstream, whose absolute URLs become relative public paths. */
  origins: readonly string[];
  /** Further explicit prefix mappings, applied to any href. */
  mappings: readonly { from: string; to: string }[];
}

function startsWithSegment(href: string, prefix: string): boolean {
  if (!href.startsWith(prefix)) return false;
  const next = href.charAt(prefix.length);
  return next === "" || next === "/" || next === "?" || next === "#";
}

/** Builds the href rewriter of a set of rules (done once per operation). */
export function hrefRewriter(rules: RewriteRules): HrefRewriter {
  const prefixes = [...rules.prefixes].sort((a, b) => b.length - a.length);
  const origins = rules.origins.map((o) => o.replace(/\/+$/, ""));
  return (href) => {
    let out = href;
    for (const origin of origins) {
      if (startsWithSegment(out, origin)) {
        out = out.slice(origin.length) || "/";
        break;
      }
    }
    for (const prefix of prefixes) {
      if (startsWithSegment(out, prefix)) {
        out = rules.publicPrefix + out.slice(prefix.length);
        break;
      }
    }
    for (const { from, to } of rules.mappings) {
      if (out.startsWith(from)) {
        out = to + out.slice(from.length);
        break;
      }
    }
    return out;
  };
}

/** A URL with a scheme and an authority (`https://host...`). */
const ABSOLUTE = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;

/**
 * Builds the rewriter of `Location` values: as an href, and then an absolute URL of an unknown
 * origin whose path lies under an upstream prefix as its path.
 */
export function locationRewriter(rules: RewriteRules): HrefRewriter {
  const href = hrefRewriter(rules);
  return (location) => {
    const out = href(location);
    if (!ABSOLUTE.test(out)) return out;
    let url: URL;
    try {
      url = new URL(out);
    } catch {
      return out;
    }
    const path = url.pathname + url.search + url.hash;
    return rules.prefixes.some((prefix) => startsWithSegment(path, prefix)) ? href(path) : out;
  };
}

/** An `href` member and its JSON string value (quotes in a value are always escaped). */
const HREF = /"href"\s*:\s*("(?:[^"\\]|\\.)*")/g;

/**
 * Rewrites the `href` members of a JSON text; returns `undefined` when nothing changes, so that
 * the caller can pass the original bytes on. The text is scanned, not parsed: an unescaped
 * `"href"` followed by `:` can only be a member name, and each value is decoded and re-encoded as
 * a JSON string, so escapes are handled and nothing else of the body is touched.
 */
export function rewriteLinks(text: string, rewrite: HrefRewriter): string | undefined {
  if (!text.includes('"href"')) return undefined;
  let changed = false;
  const out = text.replace(HREF, (member: string, literal: string) => {
    let href: string;
    try {
      href = JSON.parse(literal);
    } catch {
      return member;
    }
    const next = rewrite(href);
    if (next === href) return member;
    changed = true;
    return `"href":${JSON.stringify(next)}`;
  });
  return changed ? out : undefined;
}

const prefix = pathPrefix();

export const links = defineCheck({
  key: "links",
  description:
    "Rewrites _links hrefs and the Location header that point at the upstream to the public prefix",
  options: z.object({
    rewrite: z.boolean().default(true).describe("Rewrite links at all"),
    upstream_prefixes: z.array(prefix).default(["/psd2/v1", "/0.8/v1", "/v1"]).describe(
      "Path prefixes the upstream uses in its links",
    ),
    public_prefix: prefix.default("/v1").describe("The prefix TPPs see"),
    upstream_origins: z.array(z.url()).default([]).describe(
      "Further origins whose absolute links count as upstream links (the upstream URL's own origin always does)",
    ),
    mappings: z.array(
      z.object({
        from: z.string().min(1).describe("Prefix of the href as the upstream sends it"),
        to: z.string().describe("What replaces that prefix"),
      }).strict(),
    ).default([]).describe(
      "Explicit rewrites for links that point elsewhere, for example the bank's SCA pages",
    ),
  }).strict(),
  create(options, { sections, services }) {
    if (!options.rewrite) return undefined;
    const rules: RewriteRules = {
      prefixes: options.upstream_prefixes,
      publicPrefix: options.public_prefix,
      origins: [new URL(sections.upstream.url).origin, ...options.upstream_origins],
      mappings: options.mappings,
    };
    const rewrite = hrefRewriter(rules);
    const relocate = locationRewriter(rules);
    return {
      answer: (c, answer) =>
        rewritten(answer, { rewrite, relocate, log: services.log, requestId: c.get("requestId") }),
    };
  },
});

/**
 * The answer with its links rewritten: the `href` members of a JSON body and every `Location`
 * (also on an operation the interface gives none, where the proxy's answer_headers may let the
 * core's one through); the same answer when nothing changes.
 */
function rewritten(
  answer: Answer,
  { rewrite, relocate, log, requestId }: {
    rewrite: HrefRewriter;
    relocate: HrefRewriter;
    log: Services["log"];
    requestId: string;
  },
): Answer | undefined {
  let headers: Answer["headers"] | undefined;
  const locations = answer.headers.filter((entry) => entry[0] === "location");
  if (locations.length > 0) {
    const value = locations.map((entry) => entry[1]).join(", ");
    const moved = relocation(value, relocate);
    if (moved !== value) {
      headers = [...answer.headers.filter((entry) => entry[0] !== "location"), ["location", moved]];
    }
  }
  let body: string | undefined;
  if (answer.body !== null && isJsonAnswer(answer)) {
    const text = answerText(answer);
    if (text === undefined) {
      // Decoding would turn the invalid bytes into U+FFFD: the answer passes as the bank sent it.
      log.info({
        level: "warn",
        msg: "links not rewritten: the answer is not valid UTF-8",
        request_id: requestId,
      });
    } else body = rewriteLinks(text, rewrite);
  }
  if (headers === undefined && body === undefined) return undefined;
  return changed(answer, { ...(headers && { headers }), ...(body !== undefined && { body }) });
}

/**
 * The Location values rewritten. Several values (a core's second Location) are joined by ", " as
 * `Headers.get` gives them, and each is rewritten on its own (a URL has no ", "): the second would
 * otherwise pass unrewritten inside the first one's path.
 */
function relocation(value: string, relocate: HrefRewriter): string {
  return value.split(", ").map((part) => relocate(part)).join(", ");
}
