/**
 * The Upstash backend (`@upstash/redis`, Redis over HTTP), for Deno Deploy and other edge
 * runtimes where raw TCP is not available. One HTTP request per store call, no client retries
 * (a retry would hide an outage behind latency), a deadline on every request. Results come as
 * plain JSON: the client never asks for `Upstash-Encoding: base64`, whose answers it would
 * decode blindly (a server that ignores the header then yields made-up verdicts); every value
 * the scripts return is text.
 */
import { Redis } from "@upstash/redis";
import type { StoreSection } from "../sections/sections.ts";
import type { Store, StoreCondition, StoreOptions } from "./types.ts";
import { scriptedStore, type ScriptTransport } from "./script.ts";

/** A store on the Upstash REST endpoint `section.url` with `section.token`. */
export function upstashStore(section: StoreSection, options: StoreOptions = {}): Store {
  const redis = new Redis({
    url: section.url,
    token: section.token,
    // A function, so that an aborted request throws (a fixed signal yields a made-up result).
    signal: () => AbortSignal.timeout(section.timeout),
    retry: { retries: 0 },
    responseEncoding: false,
    automaticDeserialization: false,
    enableAutoPipelining: false,
    enableTelemetry: false,
    readYourWrites: false,
  });
  const transport: ScriptTransport = {
    evalSha: (sha, keys, args) => redis.evalsha(sha, keys, args),
    eval: (script, keys, args) => redis.eval(script, keys, args),
    get: (key) => redis.get(key),
    del: (key) => redis.del(key),
    close: () => Promise.resolve(),
  };
  const store = scriptedStore(transport, {
    kind: "upstash",
    prefix: section.prefix,
    timeoutMs: section.timeout,
    log: options.log,
  });
  // Upstash's REST API has no CONFIG: what it keeps is the database's setting, said as such.
  const condition = (): StoreCondition => ({
    warnings: [],
    unknown:
      "Upstash answers no CONFIG: keep eviction off for the database (its console's setting), or it may drop executed X-Request-IDs",
  });
  return Object.assign(store, { condition });
}
