/**
 * `links`: on the way out, rewrites every `href` that points at the upstream (a legacy prefix such
 * as `/psd2/v1`, or an absolute URL of the upstream host) to the public prefix: the hyperlinks of
 * `_links` at any depth and of the checkout's `links[]`, and any other `href` member, so that no
 * internal address leaks. Links elsewhere (the bank's SCA pages, `approve`) stay as they are
 * unless a mapping says otherwise. A response with nothing to rewrite is passed through as it is.
 * The `Location` of an answer (any operation) is rewritten the same way, and an absolute one of any
 * origin whose path lies under an upstream prefix becomes the public path: it names the API,
 * never another site, and an internal host name must not leak. Any other absolute Location (or a
 * network-path one, `//host/...`) passes only when its origin is the request's own or one the
 * policy lists (`location_origins`); else it is dropped and logged.
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
 * A network-path reference (`//host/...`): a client resolves it to a host. URL parsers, as
 * browsers do, take a backslash for a slash and skip leading blanks and controls.
 */
// deno-lint-ignore no-control-regex
const NETWORK_PATH = /^[\x00-\x20]*[/\\]{2}/;

/**
 * Rewrites one `Location` value for the request of `requestHost`, or returns `undefined` to drop
 * it (see {@link locationRewriter}).
 */
export type LocationRewriter = (location: string, requestHost: string) => string | undefined;

/**
 * Builds the rewriter of `Location` values: as an href; then an absolute URL whose path lies under
 * an upstream prefix becomes that path (whatever its origin); any other absolute or network-path
 * URL is kept only when its host is the request's own (the name the TPP called) or its origin is
 * one of `allowed`, and dropped (`undefined`) otherwise: it would name a host of the bank's
 * network, or send the TPP elsewhere on the core's word.
 */
export function locationRewriter(
  rules: RewriteRules,
  allowed: readonly string[] = [],
): LocationRewriter {
  const href = hrefRewriter(rules);
  const origins = new Set(allowed.map((origin) => new URL(origin).origin));
  return (location, requestHost) => {
    const out = href(location);
    const network = NETWORK_PATH.test(out);
    if (!network && !ABSOLUTE.test(out)) return out;
    const url = URL.parse(out, "https://gateway.invalid");
    if (url === null) return undefined;
    const path = url.pathname + url.search + url.hash;
    if (rules.prefixes.some((prefix) => startsWithSegment(path, prefix))) return href(path);
    return url.host === requestHost || origins.has(url.origin) ? out : undefined;
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
    location_origins: z.array(z.url()).default([]).describe(
      "Origins an absolute Location of the core may name and that pass as they are (the bank's other public sites); the request's own host always may. Any other absolute Location outside the upstream prefixes is dropped and logged",
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
    const relocate = locationRewriter(rules, options.location_origins);
    return {
      answer: (c, answer) =>
        rewritten(answer, {
          rewrite,
          relocate,
          log: services.log,
          requestId: c.get("requestId"),
          requestUrl: c.req.url,
        }),
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
  { rewrite, relocate, log, requestId, requestUrl }: {
    rewrite: HrefRewriter;
    relocate: LocationRewriter;
    log: Services["log"];
    requestId: string;
    requestUrl: string;
  },
): Answer | undefined {
  let headers: Answer["headers"] | undefined;
  const locations = answer.headers.filter((entry) => entry[0] === "location");
  if (locations.length > 0) {
    const value = locations.map((entry) => entry[1]).join(", ");
    const { kept, dropped } = relocation(value, relocate, new URL(requestUrl).host);
    if (dropped > 0) {
      log.info({
        level: "warn",
        msg: "Location dropped: an absolute URL of an origin neither public nor listed",
        request_id: requestId,
        dropped,
      });
    }
    if (kept !== value) {
      headers = answer.headers.filter((entry) => entry[0] !== "location");
      if (kept !== "") headers = [...headers, ["location", kept]];
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
 * otherwise pass unrewritten inside the first one's path. Those the rewriter drops are counted.
 */
function relocation(
  value: string,
  relocate: LocationRewriter,
  requestHost: string,
): { kept: string; dropped: number } {
  const kept: string[] = [];
  let dropped = 0;
  for (const part of value.split(", ")) {
    const out = relocate(part, requestHost);
    if (out === undefined) dropped++;
    else kept.push(out);
  }
  return { kept: kept.join(", "), dropped };
}
