/**
 * `links`: on the way out, rewrites every `href` under `_links` (and the checkout's `links[]`) that
 * points at the upstream (a legacy prefix such as `/psd2/v1`, or an absolute URL of the upstream
 * host) to the public prefix. Links elsewhere (the bank's SCA pages, `approve`) stay as they are
 * unless a mapping says otherwise. A response with nothing to rewrite is passed through as it is.
 */
import { z } from "zod";
import { defineCheck } from "../src/check.ts";

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

function rewriteTree(node: unknown, rewrite: HrefRewriter, inLinks: boolean): boolean {
  if (Array.isArray(node)) {
    let changed = false;
    for (const item of node) changed = rewriteTree(item, rewrite, inLinks) || changed;
    return changed;
  }
  if (!node || typeof node !== "object") return false;
  const object = node as Record<string, unknown>;
  let changed = false;
  for (const key in object) {
    const value = object[key];
    if (inLinks && key === "href" && typeof value === "string") {
      const next = rewrite(value);
      if (next !== value) {
        object[key] = next;
        changed = true;
      }
    } else if (value && typeof value === "object") {
      const links = inLinks || key === "_links" || key === "links";
      changed = rewriteTree(value, rewrite, links) || changed;
    }
  }
  return changed;
}

/**
 * Rewrites the links of a JSON text; returns `undefined` when nothing changes (or the text is not
 * JSON), so that the caller can pass the original bytes on.
 */
export function rewriteLinks(text: string, rewrite: HrefRewriter): string | undefined {
  if (!text.includes('"href"')) return undefined;
  let tree: unknown;
  try {
    tree = JSON.parse(text);
  } catch {
    return undefined;
  }
  return rewriteTree(tree, rewrite, false) ? JSON.stringify(tree) : undefined;
}

const prefix = z.string().regex(/^(\/[A-Za-z0-9._~-]+)+$/, "a path prefix like /psd2/v1");

export const links = defineCheck({
  key: "links",
  description: "Rewrites _links hrefs that point at the upstream to the public prefix",
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
  create(options, { sections }) {
    if (!options.rewrite) return undefined;
    const rewrite = hrefRewriter({
      prefixes: options.upstream_prefixes,
      publicPrefix: options.public_prefix,
      origins: [new URL(sections.upstream.url).origin, ...options.upstream_origins],
      mappings: options.mappings,
    });
    const decoder = new TextDecoder();
    return async (c, next) => {
      await next();
      const body = c.get("responseBody");
      if (!body || !c.res.headers.get("content-type")?.includes("json")) return;
      const rewritten = rewriteLinks(decoder.decode(body), rewrite);
      if (rewritten === undefined) return;
      c.res = new Response(rewritten, { status: c.res.status, headers: c.res.headers });
    };
  },
});
