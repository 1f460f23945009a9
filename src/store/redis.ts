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

/**
 * A store on Redis at `section.url` (redis:// or rediss://). Waits up to `timeout_ms` for the
 * first connection; a Redis that is down at start-up is retried in the background.
 */
export async function redisStore(
  section: StoreSection,
  options: StoreOptions = {},
): Promise<Store> {
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
  // A gateway starts even while Redis is down: the client keeps reconnecting in the background.
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    client.connect().catch(() => {}),
    new Promise((resolve) => timer = setTimeout(resolve, timeout)),
  ]);
  clearTimeout(timer);

  const send = (args: string[]) => client.sendCommand(args);
  const transport: ScriptTransport = {
    evalSha: (sha, keys, args) => send(["EVALSHA", sha, String(keys.length), ...keys, ...args]),
    eval: (script, keys, args) => send(["EVAL", script, String(keys.length), ...keys, ...args]),
    set: (key, value, ttlMs) => send(["SET", key, value, "PX", String(ttlMs)]),
    del: (key) => send(["DEL", key]),
    async close() {
      if (closed) return;
      closed = true;
      // A clean QUIT when Redis answers; never wait on one that does not.
      if (client.isReady) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const closing = client.close().then(() => true, () => false);
        const timedOut = new Promise<boolean>((r) => timer = setTimeout(() => r(false), timeout));
        const clean = await Promise.race([closing, timedOut]);
        clearTimeout(timer);
        if (clean) return;
      }
      try {
        client.destroy();
      } catch {
        // Already closed.
      }
    },
  };
  return scriptedStore(transport, {
    kind: "redis",
    prefix: section.prefix,
    timeoutMs: section.timeout_ms,
    log: options.log,
  });
}
