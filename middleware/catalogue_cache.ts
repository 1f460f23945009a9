/**
 * `catalogue_cache`: the public product catalogue (the `products` group: no PSU data) answered
 * from memory for `ttl`, per gateway instance. The key is every part of the request the core
 * may answer differently to: the path, the query, Accept, Accept-Language, the TPP the gateway
 * verified (its certificate header reaches the core) and the headers named in `vary` (those that
 * `proxy.forward_headers` passes to the core and the catalogue depends on). A request with credentials
 * (Authorization, Cookie) is neither answered from nor kept in the cache: the core may answer
 * each client its own catalogue (RFC 9111 §3.5). Only the core's 200 answers are kept, and not
 * one whose Vary (when `proxy.answer_headers` passes it) names another request header or `*`. Every cached answer carries an ETag (a
 * hash of its body), `Cache-Control: public, max-age=<seconds left>` and `Vary: Accept,
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
import { duration, headerName } from "../src/lib/fields.ts";
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

/** Request headers whose presence means the answer may be the client's own: never cached. */
const CREDENTIALS = ["authorization", "cookie"];

/** Request headers every key holds (Accept-Encoding: the gateway asks the core for identity). */
const KEYED = ["accept", "accept-language"];

/** Whether the core's Vary names a request header the key does not hold (or `*`). */
function variesOtherwise(headers: readonly AnswerHeader[], keyed: ReadonlySet<string>): boolean {
  return headers.some(([name, value]) =>
    name === "vary" &&
    value.split(",").some((field) => {
      const header = field.trim().toLowerCase();
      return header !== "" && header !== "accept-encoding" && !keyed.has(header);
    })
  );
}

/** Whether If-None-Match names `etag` (a list, weak or strong, or `*`). */
function matches(ifNoneMatch: string | null, etag: string): boolean {
  if (ifNoneMatch === null) return false;
  return ifNoneMatch.split(",").some((tag) => {
    const trimmed = tag.trim();
    return trimmed === "*" || trimmed === etag || trimmed === `W/${etag}`;
  });
}

/** The cache's own headers of a kept answer. */
function cacheHeaders(kept: Kept, expires: number, now: number, vary: string): AnswerHeader[] {
  const maxAge = Math.max(0, Math.floor((expires - now) / 1000));
  return [
    ["etag", kept.etag],
    ["cache-control", `public, max-age=${maxAge}`],
    ["vary", vary],
  ];
}

/** The answer of a kept answer: 304 when the request already has it, else 200. */
function fromCache(
  c: GatewayContext,
  kept: Kept,
  at: { expires: number; now: number; vary: string },
): Answer {
  const headers = cacheHeaders(kept, at.expires, at.now, at.vary);
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
    vary: z.array(headerName()).default([]).describe(
      "Further request headers the cache keys on: those proxy.forward_headers passes to the core that its catalogue depends on (Accept, Accept-Language and the verified TPP always count; a request with Authorization or Cookie is never cached)",
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
    const keyed = [...KEYED, ...options.vary.map((name) => name.toLowerCase())];
    const keyedSet = new Set(keyed);
    /** The Vary of a cached answer: what the key holds (the TPP's certificate aside). */
    const vary = ["Accept", "Accept-Language", ...options.vary].join(", ");
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
        const headers = requestHeaders(c);
        if (CREDENTIALS.some((name) => headers.has(name))) return next();
        const url = new URL(c.req.url);
        const key = [
          `${url.pathname}${url.search}`,
          c.get("tpp")?.id ?? "",
          ...keyed.map((name) => headers.get(name) ?? ""),
        ].join("\n");
        const now = services.now();
        const hit = cache.get(key, now);
        if (!hit) {
          counted.miss.value++;
          c.set("cacheMiss", key);
          return next();
        }
        const answer = fromCache(c, hit.value, { expires: hit.expires, now, vary });
        (answer.status === 304 ? counted.notModified : counted.hit).value++;
        return localReply(c, answer);
      },
      answer(c, answer) {
        const key = c.get("cacheMiss");
        // Only the core's own 200 answers are kept (not an error the gateway made).
        if (key === undefined || answer.status !== 200 || answer.source !== "core") return;
        if (variesOtherwise(answer.headers, keyedSet)) return;
        const headers = answer.headers.filter((entry) => !NOT_KEPT.has(entry[0]));
        const body = answerBytes(answer);
        const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
        const now = services.now();
        const kept = cache.set(key, { body, headers, etag }, now);
        return changed(answer, {
          headers: [...headers, ...cacheHeaders(kept.value, kept.expires, now, vary)],
        });
      },
    };
  },
});
