/**
 * The Redis backend (npm `redis`, node-redis v5, over TCP), for gateways in the bank's own data
 * centre. Commands never queue while disconnected (they fail at once and the checks apply their
 * `fail` policy), every command has a deadline, and the client reconnects by itself, so the
 * gateway recovers from a Redis restart without one of its own. A connection that takes commands
 * but answers none (a frozen or half-open peer) is replaced by a new one.
 */
import { createClient } from "redis";
import type { StoreSection } from "../sections.ts";
import type { Store, StoreOptions } from "./mod.ts";
import { scriptedStore, withDeadline } from "./script.ts";

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
 * Connects to Redis at `url`, waiting up to `timeoutMs` for the first connection (a Redis that is
 * down is retried in the background). A connection that has answered nothing for a while although
 * commands fail (a frozen or half-open peer, or a client stuck after a restart) is replaced.
 */
export async function redisConnection(
  url: string,
  options: { timeoutMs: number; log?: StoreOptions["log"] },
): Promise<RedisConnection> {
  const timeout = options.timeoutMs;
  const stale = Math.max(4 * timeout, 1000);
  let current = connect(url, timeout);
  let lastAnswer = Date.now();
  let closed = false;
  await withDeadline(current.connected, timeout).catch(() => {});
  return {
    async send(args) {
      const { client } = current;
      try {
        const reply = await withDeadline(client.sendCommand(args), timeout);
        lastAnswer = Date.now();
        return reply;
      } catch (error) {
        if ((error as Error)?.name === "ErrorReply") {
          lastAnswer = Date.now();
        } else if (!closed && client === current.client && Date.now() - lastAnswer > stale) {
          options.log?.error({ msg: "store connection replaced", store: "redis" });
          lastAnswer = Date.now();
          current = connect(url, timeout);
          destroy(client);
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
        const clean = await withDeadline(client.close().then(() => true), timeout)
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
    timeoutMs: section.timeout_ms,
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
    timeoutMs: section.timeout_ms,
    log: options.log,
  });
}
