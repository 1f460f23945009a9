/**
 * The Redis backend (npm `redis`, node-redis v5, over TCP), for gateways in the bank's own data
 * centre. Commands never queue while disconnected, every command has a deadline, and the
 * connection is this module's to keep: when it is lost, a command that needs it connects at once
 * (sharing an attempt in flight) and a background attempt follows with backoff, so the first
 * request after a Redis restart is decided on a fresh connection rather than failed while a
 * client library sleeps between attempts. A connection that takes commands but answers none (a
 * frozen or half-open peer) is replaced. Its settings are read at start and on each new connection
 * (`redis_settings.ts`): a Redis that may forget executed X-Request-IDs is logged and reported.
 */
import { createClient, ErrorReply } from "redis";
import type { StoreSection } from "../sections/sections.ts";
import { type Store, type StoreOptions, StoreUnavailableError } from "./types.ts";
import { scriptedStore, storeDeadline } from "./script.ts";
import { SettingsWatch } from "./redis_settings.ts";
import { replicated, type ReplicaWait } from "./replicas.ts";

/**
 * Most decisions of one event-loop turn sent in one script call (and most reads in one MGET):
 * Redis runs a call's decisions one after another and nothing else meanwhile, so the bound keeps
 * a call short (64 of them take well under a millisecond).
 */
export const DECISIONS_PER_CALL = 64;

/** Longest pause between two background reconnection attempts, in milliseconds. */
const MAX_RECONNECT_DELAY = 1000;

type Client = ReturnType<typeof newClient>;

/**
 * Idle time before TCP keep-alive probes start on a Redis connection (node-redis 5's default; 6
 * waits 30 s): a peer that vanished without closing is found while the connection is idle.
 */
export const KEEPALIVE_MS = 5000;

/**
 * A client that never reconnects by itself: node-redis sleeps between its attempts (up to its
 * backoff) and fails every command meanwhile, even once Redis answers again. Before this module
 * kept the connection, a restart after an outage under light traffic gave 503s for a minute.
 */
function newClient(url: string, connectMs: number) {
  const client = createClient({
    url,
    // RESP2, the wire protocol the scripts' replies were written for (node-redis 6 defaults to 3).
    RESP: 2,
    disableOfflineQueue: true,
    // No client-side command timeout: every command has the store's own deadline (a shared timer,
    // src/lib/deadline.ts). node-redis 6's default of 5 s gave each command an
    // AbortSignal.timeout whose timer fired, unneeded, 5 s later: about 1.4 % of the gateway's
    // CPU on the Redis write row.
    commandOptions: { timeout: 0 },
    socket: {
      connectTimeout: connectMs,
      reconnectStrategy: false,
      keepAliveInitialDelay: KEEPALIVE_MS,
    },
  });
  // Without a listener an "error" event would end the process; the store logs its failures.
  client.on("error", () => {});
  // The connection alone never keeps the process alive: under `deno serve` a worker ends when
  // its server has shut down, which nothing else would close the store for.
  client.unref();
  return client;
}

function destroy(client: Client) {
  try {
    client.destroy();
  } catch {
    // Already closed.
  }
}

/** A Redis connection that bounds every command and reconnects as soon as a command needs it. */
export interface RedisConnection {
  send(args: string[]): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * Connects to Redis at `url`, waiting up to 2 s (or `timeoutMs`) for the first connection (a Redis
 * that is down is retried in the background). A connection whose commands have all failed for a
 * while without any answer (a frozen or half-open peer) is replaced.
 */
export async function redisConnection(
  url: string,
  options: {
    timeoutMs: number;
    log?: StoreOptions["log"];
    /** Called on each new connection (a restart or failover may bring other settings). */
    onConnect?: () => void;
  },
): Promise<RedisConnection> {
  const timeout = options.timeoutMs;
  const stale = Math.max(4 * timeout, 1000);
  // An attempt may outlive the command that started it (a TLS handshake to a remote Redis), so
  // that the next command finds the connection made.
  const connectMs = Math.max(timeout, 1000);
  /** The connection commands go to; not ready once lost. */
  let client: Client | undefined;
  /** The connection attempt in flight (resolves to the new client, or undefined). */
  let attempt: Promise<Client | undefined> | undefined;
  /** Connection attempts that failed in a row (the background backoff). */
  let failures = 0;
  let retry: ReturnType<typeof setTimeout> | undefined;
  /** Since when commands have failed without any answer in between (undefined: not failing). */
  let failingSince: number | undefined;
  let closed = false;

  /** A background attempt after a pause, while there is no connection. */
  function reconnectLater() {
    if (closed || retry !== undefined || attempt || client?.isReady) return;
    const delay = Math.min(50 * 2 ** Math.min(failures, 5), MAX_RECONNECT_DELAY);
    retry = setTimeout(() => {
      retry = undefined;
      connectNow();
    }, delay);
    Deno.unrefTimer(retry);
  }

  /** Connects now, or joins the attempt in flight. */
  function connectNow(): Promise<Client | undefined> {
    if (attempt) return attempt;
    clearTimeout(retry);
    retry = undefined;
    const fresh = newClient(url, connectMs);
    attempt = storeDeadline(fresh.connect(), connectMs).then(
      () => {
        if (closed) {
          destroy(fresh);
          return undefined;
        }
        const previous = client;
        client = fresh;
        failures = 0;
        failingSince = undefined;
        if (previous) destroy(previous);
        // Lost (the peer closed, a reset): the next command connects at once, or the background.
        fresh.on("error", () => {
          if (client === fresh && !fresh.isReady) queueMicrotask(reconnectLater);
        });
        if (options.onConnect) queueMicrotask(options.onConnect);
        return fresh;
      },
      () => {
        destroy(fresh);
        failures++;
        return undefined;
      },
    ).finally(() => {
      attempt = undefined;
      reconnectLater();
    });
    return attempt;
  }

  // At start-up, give a Redis that is starting too a moment before the first requests.
  await storeDeadline(connectNow(), Math.max(timeout, 2000)).catch(() => {});
  return {
    async send(args) {
      let current = client;
      if (!current?.isReady) current = await connectNow();
      if (!current || closed) throw new StoreUnavailableError("Redis is not reachable");
      try {
        const reply = await storeDeadline(current.sendCommand(args), timeout);
        failingSince = undefined;
        return reply;
      } catch (error) {
        if (error instanceof ErrorReply) {
          // Redis answered (NOSCRIPT after a restart, LOADING, a script's error): it is there.
          failingSince = undefined;
        } else if (current === client && current.isReady && !closed) {
          const now = Date.now();
          failingSince ??= now;
          if (now - failingSince > stale) {
            options.log?.error({ msg: "store connection replaced", store: "redis" });
            failingSince = undefined;
            client = undefined;
            destroy(current);
            connectNow();
          }
        }
        throw error;
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      clearTimeout(retry);
      const current = client;
      client = undefined;
      if (!current) return;
      // A clean QUIT when Redis answers; never wait on one that does not.
      if (current.isReady) {
        const clean = await storeDeadline(current.close().then(() => true), timeout)
          .catch(() => false);
        if (clean) return;
      }
      destroy(current);
    },
  };
}

/** A store on Redis at `section.url` (redis:// or rediss://). */
export async function redisStore(
  section: StoreSection,
  options: StoreOptions = {},
): Promise<Store> {
  const watch = new SettingsWatch(options.log);
  const node = new URL(section.url).host;
  /** The first read is awaited below; later ones follow each new connection. */
  let started = false;
  const { send, close } = await redisConnection(section.url, {
    timeoutMs: section.timeout,
    log: options.log,
    onConnect: () => started && void watch.read(node, send),
  });
  await watch.read(node, send);
  started = true;
  // store.replicas: each write waits for the replicas' acknowledgement (replicas.ts).
  const needs: ReplicaWait = {
    replicas: section.replicas,
    timeoutMs: section.replica_timeout,
    wait: send,
  };
  const store = scriptedStore({
    evalSha: (sha, keys, args) =>
      replicated(send(["EVALSHA", sha, String(keys.length), ...keys, ...args]), needs),
    eval: (script, keys, args) =>
      replicated(send(["EVAL", script, String(keys.length), ...keys, ...args]), needs),
    get: (key) => send(["GET", key]),
    getMany: (keys) => send(["MGET", ...keys]),
    del: (key) => send(["DEL", key]),
    close,
  }, {
    kind: "redis",
    prefix: section.prefix,
    timeoutMs: section.timeout,
    log: options.log,
    batch: DECISIONS_PER_CALL,
  });
  return Object.assign(store, { condition: () => watch.condition() });
}
