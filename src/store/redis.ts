/**
 * The Redis backend (npm `redis`, node-redis v5, over TCP), for gateways in the bank's own data
 * centre. Commands never queue while disconnected (they fail at once and the checks apply their
 * `fail` policy), every command has a deadline, and the client reconnects by itself, so the
 * gateway recovers from a Redis restart without one of its own. A connection that takes commands
 * but answers none (a frozen or half-open peer) is replaced by a new one.
 */
import { createClient } from "redis";
import type { StoreSection } from "../policy/sections.ts";
import type { Store, StoreOptions } from "./types.ts";
import { scriptedStore, storeDeadline } from "./script.ts";

/** Longest pause between two reconnection attempts, in milliseconds. */
const MAX_RECONNECT_DELAY = 1000;

function connect(url: string, timeout: number) {
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: timeout,
      reconnectStrategy: (retries: number) =>
        Math.min(50 * 2 ** Math.min(retries, 5), MAX_RECONNECT_DELAY),
    },
  });
  // Without a listener an "error" event would end the process; the store logs its failures.
  client.on("error", () => {});
  // The connection alone never keeps the process alive (its reconnections neither): under
  // `deno serve` a worker ends when its server has shut down, which nothing else would close the
  // store for.
  client.unref();
  return { client, connected: client.connect().then(() => {}, () => {}) };
}

function destroy(client: ReturnType<typeof createClient>) {
  try {
    client.destroy();
  } catch {
    // Already closed.
  }
}

/** A Redis connection that bounds every command and replaces itself when it stops answering. */
export interface RedisConnection {
  send(args: string[]): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * Connects to Redis at `url`, waiting up to 2 s (or `timeoutMs`) for the first connection (a Redis
 * that is down is retried in the background). A connection whose commands have all failed for a
 * while without any answer (a frozen or half-open peer, a client stuck after a restart) is replaced.
 */
export async function redisConnection(
  url: string,
  options: { timeoutMs: number; log?: StoreOptions["log"] },
): Promise<RedisConnection> {
  const timeout = options.timeoutMs;
  const stale = Math.max(4 * timeout, 1000);
  let current = connect(url, timeout);
  // Since when commands have failed without any answer in between (undefined: not failing).
  let failingSince: number | undefined;
  let closed = false;
  // At start-up, give a Redis that is starting too a moment before the first requests.
  await storeDeadline(current.connected, Math.max(timeout, 2000)).catch(() => {});
  return {
    async send(args) {
      const { client } = current;
      try {
        const reply = await storeDeadline(client.sendCommand(args), timeout);
        failingSince = undefined;
        return reply;
      } catch (error) {
        const now = Date.now();
        if ((error as Error)?.name === "ErrorReply") {
          failingSince = undefined;
        } else if (client === current.client && !closed) {
          failingSince ??= now;
          if (now - failingSince > stale) {
            options.log?.error({ msg: "store connection replaced", store: "redis" });
            failingSince = undefined;
            current = connect(url, timeout);
            destroy(client);
          }
        }
        throw error;
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      const { client } = current;
      // A clean QUIT when Redis answers; never wait on one that does not.
      if (client.isReady) {
        const clean = await storeDeadline(client.close().then(() => true), timeout)
          .catch(() => false);
        if (clean) return;
      }
      destroy(client);
    },
  };
}

/** A store on Redis at `section.url` (redis:// or rediss://). */
export async function redisStore(
  section: StoreSection,
  options: StoreOptions = {},
): Promise<Store> {
  const { send, close } = await redisConnection(section.url, {
    timeoutMs: section.timeout,
    log: options.log,
  });
  return scriptedStore({
    evalSha: (sha, keys, args) => send(["EVALSHA", sha, String(keys.length), ...keys, ...args]),
    eval: (script, keys, args) => send(["EVAL", script, String(keys.length), ...keys, ...args]),
    set: (key, value, ttlMs) => send(["SET", key, value, "PX", String(ttlMs)]),
    del: (key) => send(["DEL", key]),
    close,
  }, {
    kind: "redis",
    prefix: section.prefix,
    timeoutMs: section.timeout,
    log: options.log,
  });
}
