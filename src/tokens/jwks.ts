/**
 * Where bearer tokens' keys come from: a JWKS file read at start-up, or a JWKS URL fetched with
 * the gateway's fetch, cached, and refetched on an unknown `kid` at most once per interval
 * (jose's remote key set). One key set per source and app, shared by every operation.
 */
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  type JSONWebKeySet,
  type JWTVerifyGetKey,
} from "jose";
import type { Services } from "../core/services.ts";
import { policyFileText } from "../lib/policy_files.ts";

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

const files = new Map<string, JSONWebKeySet | Error>();

/** Reads and checks a JWKS file once per path; an unusable file is an Error with the reason. */
export function readJwksFile(path: string): JSONWebKeySet | Error {
  let found = files.get(path);
  if (found) return found;
  try {
    const parsed = JSON.parse(policyFileText(path)); // read ahead: none on Deno Deploy
    if (!parsed || !Array.isArray(parsed.keys) || parsed.keys.length === 0) {
      found = new Error(`"${path}" is not a JWKS with a non-empty "keys" list`);
    } else {
      found = parsed as JSONWebKeySet;
    }
  } catch (error) {
    found = new Error(`cannot read "${path}": ${(error as Error).message}`);
  }
  files.set(path, found);
  return found;
}

const sets = new WeakMap<Services, Map<string, JWTVerifyGetKey>>();

/** The key set of a source, made once per app (services) and source. */
export function keySet(source: JwksSource, services: Services): JWTVerifyGetKey {
  let bySource = sets.get(services);
  if (!bySource) sets.set(services, bySource = new Map());
  const id = JSON.stringify(source);
  let set = bySource.get(id);
  if (set) return set;
  if (source.url) {
    set = createRemoteJWKSet(new URL(source.url), {
      cooldownDuration: source.cooldownMs,
      cacheMaxAge: source.maxAgeMs,
      timeoutDuration: source.timeoutMs,
      [customFetch]: (url, init) => services.fetch(url, init),
    });
  } else {
    const jwks = readJwksFile(source.file!);
    if (jwks instanceof Error) throw jwks;
    set = createLocalJWKSet(jwks);
  }
  bySource.set(id, set);
  return set;
}
