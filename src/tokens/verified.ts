/**
 * Bearer tokens verified once: a TPP sends the same access token with every request until it
 * expires, and checking its RS256 or PS256 signature each time cost more CPU than the rest of a
 * read (a third of the gateway's samples on the production example's read). A token whose
 * signature verified is kept with the key that verified it; when the same token comes again, its
 * key is looked up as for a first verification (so a key set that is no longer fresh is fetched
 * again, and a key that left the set is not found), and the kept result counts only when that is
 * still the very key, and the token's exp and nbf still hold. Anything else is verified in full,
 * which also gives the error a token gets.
 */
import type { JWTHeaderParameters, JWTPayload, JWTVerifyGetKey, JWTVerifyOptions } from "jose";
import { BoundedCache } from "../pki/lru.ts";
import { lazy } from "../lib/lazy.ts";

/** jose's JWT verification, loaded with the first token to verify (a start verifies none). */
const joseVerify = lazy(() => import("jose/jwt/verify"));

/** Tokens kept per key set and verification options (the least recently used go first). */
export const VERIFIED_TOKENS = 10_000;

interface Verified {
  key: unknown;
  header: JWTHeaderParameters;
  claims: JWTPayload;
}

const caches = new WeakMap<JWTVerifyGetKey, Map<string, BoundedCache<string, Verified>>>();

function cacheOf(keys: JWTVerifyGetKey, options: JWTVerifyOptions): BoundedCache<string, Verified> {
  let byOptions = caches.get(keys);
  if (!byOptions) caches.set(keys, byOptions = new Map());
  const id = JSON.stringify(options);
  let cache = byOptions.get(id);
  if (!cache) byOptions.set(id, cache = new BoundedCache(VERIFIED_TOKENS));
  return cache;
}

/** Whether exp and nbf hold at `now` (milliseconds), with the options' clock tolerance. */
function timely(claims: JWTPayload, options: JWTVerifyOptions, now: number): boolean {
  const seconds = now / 1000;
  const tolerance = typeof options.clockTolerance === "number" ? options.clockTolerance : 0;
  if (typeof claims.exp !== "number" || claims.exp + tolerance <= seconds) return false;
  return typeof claims.nbf !== "number" || claims.nbf - tolerance <= seconds;
}

/**
 * The verifier of one key set and set of options: a token's claims, as `jwtVerify(token, keys,
 * options)` gives them (and its errors), verified once per token and key, judged at `now`
 * (milliseconds). Made once per check, so that a request only looks its token up.
 */
export function tokenVerifier(
  keys: JWTVerifyGetKey,
  options: JWTVerifyOptions,
): (token: string, now: number) => Promise<JWTPayload> {
  const cache = cacheOf(keys, options);
  return async (token, now) => {
    const kept = cache.get(token);
    if (kept && timely(kept.claims, options, now)) {
      const key = await Promise.resolve(keys(kept.header, undefined as never)).catch(() =>
        undefined
      );
      if (key !== undefined && key === kept.key) return kept.claims;
    }
    let used: unknown;
    const { jwtVerify } = await joseVerify();
    const { payload, protectedHeader } = await jwtVerify(token, async (header, input) => {
      used = await keys(header, input);
      return used as Awaited<ReturnType<JWTVerifyGetKey>>;
    }, { ...options, currentDate: new Date(now) });
    // With several matching keys jose tries each itself: no one key to keep.
    if (used !== undefined) {
      cache.set(token, { key: used, header: protectedHeader, claims: payload });
    }
    return payload;
  };
}
