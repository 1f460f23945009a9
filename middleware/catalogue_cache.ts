/**
 * `catalogue_cache`: the public product catalogue (the `products` group: no PSU data) answered
 * from memory for `ttl`, per gateway instance. The key is the path, the query and
 * Accept-Language; only the core's 200 answers are kept. Every cached answer carries an ETag
 * (a hash of its body), `Cache-Control: public, max-age=<seconds left>` and `Vary:
 * Accept-Language`; a request whose If-None-Match names the ETag gets 304 without a body.
 *
 * Set for any operation outside `products` (account, payment, consent, checkout data), the
 * policy is refused at load. Runs after every other check (a cached answer is still rate
 * limited) and before the circuit breaker and the concurrency limits (a hit costs the core
 * nothing, also while its circuit is open).
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { defineCheck, type GatewayContext } from "../src/core/check.ts";
import {
  type Answer,
  answerBytes,
  type AnswerHeader,
  changed,
  localReply,
} from "../src/core/answer.ts";
import { requestHeaders } from "../src/core/request.ts";
import { duration } from "../src/lib/fields.ts";
import { TtlCache } from "../src/lib/ttl_cache.ts";

/** The only group whose answers may be cached: the public product catalogue. */
const CACHEABLE_GROUP = "products";

/** A kept answer: its body, headers and ETag. */
interface Kept {
  body: Uint8Array<ArrayBuffer>;
  headers: AnswerHeader[];
  etag: string;
}

/** What a request the cache could not answer leaves for the answer step. */
export interface CatalogueCacheVariables {
  /** The cache key under which the core's answer is kept. */
  cacheMiss?: string;
}

declare module "../src/core/check.ts" {
  interface GatewayVariables extends CatalogueCacheVariables {}
}

/** Headers of the answer that belong to one request or one connection, never kept. */
const NOT_KEPT = new Set(["x-request-id", "date", "content-length", "cache-control", "etag"]);

/** Whether If-None-Match names `etag` (a list, weak or strong, or `*`). */
function matches(ifNoneMatch: string | null, etag: string): boolean {
  if (ifNoneMatch === null) return false;
  return ifNoneMatch.split(",").some((tag) => {
    const trimmed = tag.trim();
    return trimmed === "*" || trimmed === etag || trimmed === `W/${etag}`;
  });
}

/** The cache's own headers of a kept answer. */
function cacheHeaders(kept: Kept, expires: number, now: number): AnswerHeader[] {
  const maxAge = Math.max(0, Math.floor((expires - now) / 1000));
  return [
    ["etag", kept.etag],
    ["cache-control", `public, max-age=${maxAge}`],
    ["vary", "Accept-Language"],
  ];
}

/** The answer of a kept answer: 304 when the request already has it, else 200. */
function fromCache(c: GatewayContext, kept: Kept, expires: number, now: number): Answer {
  const headers = cacheHeaders(kept, expires, now);
  if (matches(requestHeaders(c).get("if-none-match"), kept.etag)) {
    return { status: 304, headers, body: null, source: "cache" };
  }
  return { status: 200, headers: [...kept.headers, ...headers], body: kept.body, source: "cache" };
}

export const catalogueCache = defineCheck({
  key: "catalogue_cache",
  description: "Answers the public product catalogue from memory for a TTL, with ETag and 304",
  options: z.object({
    ttl: duration({ max: "1d" }).optional().describe(
      "How long an answer of the product catalogue is served from memory (products group only); unset: not cached",
    ),
    max_entries: z.int().min(1, "must be at least 1").default(1000).describe(
      "Answers kept per operation at most; the oldest goes first",
    ),
  }).strict(),
  validate(options, operation) {
    if (options.ttl === undefined || operation.group === CACHEABLE_GROUP) return [];
    return [
      `ttl: only the "${CACHEABLE_GROUP}" group may be cached, not "${operation.group}" (its answers may carry PSU data)`,
    ];
  },
  create(options, { operation, services }) {
    if (options.ttl === undefined || operation.group !== CACHEABLE_GROUP) return undefined;
    if (operation.method !== "GET") return undefined;
    const cache = new TtlCache<Kept>({ ttlMs: options.ttl, maxEntries: options.max_entries });
    const counted = {
      hit: services.metrics.catalogueCache.cell({ op: operation.id, result: "hit" }),
      miss: services.metrics.catalogueCache.cell({ op: operation.id, result: "miss" }),
      notModified: services.metrics.catalogueCache.cell({
        op: operation.id,
        result: "not_modified",
      }),
    };
    return {
      request(c, next) {
        const url = new URL(c.req.url);
        const key = `${url.pathname}${url.search}\n${
          requestHeaders(c).get("accept-language") ?? ""
        }`;
        const now = services.now();
        const hit = cache.get(key, now);
        if (!hit) {
          counted.miss.value++;
          c.set("cacheMiss", key);
          return next();
        }
        const answer = fromCache(c, hit.value, hit.expires, now);
        (answer.status === 304 ? counted.notModified : counted.hit).value++;
        return localReply(c, answer);
      },
      answer(c, answer) {
        const key = c.get("cacheMiss");
        // Only the core's own 200 answers are kept (not an error the gateway made).
        if (key === undefined || answer.status !== 200 || answer.source !== "core") return;
        const headers = answer.headers.filter((entry) => !NOT_KEPT.has(entry[0]));
        const body = answerBytes(answer);
        const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
        const now = services.now();
        const kept = cache.set(key, { body, headers, etag }, now);
        return changed(answer, {
          headers: [...headers, ...cacheHeaders(kept.value, kept.expires, now)],
        });
      },
    };
  },
});
