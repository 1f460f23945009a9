/**
 * The Redis backend (npm `redis`, node-redis v5, over TCP), for gateways in the bank's own data
 * centre. Commands never queue while disconnected (they fail at once and the checks apply their
 * `fail` policy), every command has a deadline, and the client reconnects by itself, so the
 * gateway recovers from a Redis restart without one of its own.
 */
import { createClient } from "redis";
import type { StoreSection } from "../sections.ts";
import type { Store, StoreOptions } from "./mod.ts";
import { scriptedStore, type ScriptTransport } from "./script.ts";

/** Longest pause between two reconnection attempts, in milliseconds. */
const MAX_RECONNECT_DELAY = 1000;

/** A store on Redis at `section.url` (redis:// or rediss://). */
export function redisStore(section: StoreSection, options: StoreOptions = {}): Store {
  const timeout = section.timeout_ms;
  const client = createClient({
    url: section.url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: timeout,
      reconnectStrategy: (retries: number) =>
        Math.min(50 * 2 ** Math.min(retries, 5), MAX_RECONNECT_DELAY),
    },
  });
  // Without a listener an "error" event would end the process; the store logs its failures.
  client.on("error", () => {});
  let closed = false;
  // Connects in the background: a gateway starts even while Redis is down.
  client.connect().catch(() => {});

  const send = (args: string[]) => client.sendCommand(args, { timeout });
  const transport: ScriptTransport = {
    evalSha: (sha, keys, args) => send(["EVALSHA", sha, String(keys.length), ...keys, ...args]),
    eval: (script, keys, args) => send(["EVAL", script, String(keys.length), ...keys, ...args]),
    set: (key, value, ttlMs) => send(["SET", key, value, "PX", String(ttlMs)]),
    del: (key) => send(["DEL", key]),
    async close() {
      if (closed) return;
      closed = true;
      if (client.isOpen) {
        await client.close().catch(() => client.destroy());
      } else {
        client.destroy();
      }
    },
  };
  return scriptedStore(transport, { kind: "redis", prefix: section.prefix, log: options.log });
}
