/**
 * Where bearer tokens' keys come from: a JWKS file read at start-up, or a JWKS URL fetched with
 * the gateway's fetch, cached, and refetched on an unknown `kid` at most once per interval
 * (jose's remote key set). One key set per source and app, shared by every operation; `/readyz`
 * asks each for its state (`jwksHealth`), which fetches a set that is no longer fresh.
 */
// jose's key sets alone, not its index (JWE, key generation...): a start loads no more of jose.
import type { JSONWebKeySet, JWTVerifyGetKey } from "jose";
import { createLocalJWKSet } from "jose/jwks/local";
import { createRemoteJWKSet, customFetch } from "jose/jwks/remote";
import { policyFileText } from "../lib/policy_files.ts";
import { healthError, type SourceHealth } from "../lib/health.ts";

/** What a key set needs of the app's services; the services object itself keys the cache. */
export interface JwksServices {
  fetch: typeof fetch;
}

/** A JWKS source and its caching, from the policy. */
export interface JwksSource {
  url?: string;
  file?: string;
  /** Least time between two fetches caused by an unknown kid, in milliseconds. */
  cooldownMs: number;
  /** Age after which the fetched set is fetched again, in milliseconds. */
  maxAgeMs: number;
  /** Deadline of one fetch, in milliseconds. */
  timeoutMs: number;
}

/** The last parse of each file, with the text it came from. */
const files = new Map<string, { text: string; jwks: JSONWebKeySet | Error }>();

/**
 * Reads and checks a JWKS file; an unusable file is an Error with the reason. The parse is kept
 * while the file's text is unchanged: a reload after a key rotation sees the new keys, and a file
 * that could not be read is read again.
 */
export function readJwksFile(path: string): JSONWebKeySet | Error {
  let text: string;
  try {
    text = policyFileText(path); // read ahead: none on Deno Deploy
  } catch (error) {
    return new Error(`cannot read "${path}": ${(error as Error).message}`);
  }
  const known = files.get(path);
  if (known?.text === text) return known.jwks;
  let jwks: JSONWebKeySet | Error;
  try {
    const parsed = JSON.parse(text);
    if (!parsed || !Array.isArray(parsed.keys) || parsed.keys.length === 0) {
      jwks = new Error(`"${path}" is not a JWKS with a non-empty "keys" list`);
    } else {
      jwks = parsed as JSONWebKeySet;
    }
  } catch (error) {
    jwks = new Error(`cannot read "${path}": ${(error as Error).message}`);
  }
  files.set(path, { text, jwks });
  return jwks;
}

/** A fetched key set (jose's remote set, with its state and `reload`). */
type RemoteSet = ReturnType<typeof createRemoteJWKSet>;

const sets = new WeakMap<JwksServices, Map<string, { url: string; set: RemoteSet }>>();
/** The key set of each parsed file: a rewritten file is a new parse, so a new set. */
const fileSets = new WeakMap<JSONWebKeySet, JWTVerifyGetKey>();

/**
 * The key set of a source: for a URL made once per app (services) and source, so that its cache
 * and cooldown are shared by every operation and kept across reloads; for a file, once per content.
 */
export function keySet(source: JwksSource, services: JwksServices): JWTVerifyGetKey {
  if (!source.url) {
    const jwks = readJwksFile(source.file!);
    if (jwks instanceof Error) throw jwks;
    let set = fileSets.get(jwks);
    if (!set) fileSets.set(jwks, set = createLocalJWKSet(jwks));
    return set;
  }
  let bySource = sets.get(services);
  if (!bySource) sets.set(services, bySource = new Map());
  const id = JSON.stringify(source);
  const known = bySource.get(id);
  if (known) return known.set;
  const set = createRemoteJWKSet(new URL(source.url), {
    cooldownDuration: source.cooldownMs,
    cacheMaxAge: source.maxAgeMs,
    timeoutDuration: source.timeoutMs,
    [customFetch]: (url, init) => services.fetch(url, init),
  });
  bySource.set(id, { url: source.url, set });
  return set;
}

/**
 * The state of the app's fetched key sets whose URL is in `urls` (the policy in force): up while
 * the set is fresh (fetched within `cache_max_age`), else fetched now (as the next token would
 * be): up when that works, down when it does not (every token then gets 503 until it does).
 */
export async function jwksHealth(
  services: JwksServices,
  urls: Set<string>,
): Promise<SourceHealth[]> {
  const known = [...sets.get(services)?.values() ?? []].filter((k) => urls.has(k.url));
  return await Promise.all(known.map(async ({ url, set }): Promise<SourceHealth> => {
    try {
      if (!set.fresh) await set.reload();
      return { source: url, state: "up", keys: set.jwks()?.keys.length ?? 0 };
    } catch (error) {
      return { source: url, state: "down", error: healthError(error) };
    }
  }));
}
