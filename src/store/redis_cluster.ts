/**
 * The Redis Cluster backend (node-redis's cluster client), for banks that outgrow one Redis (or
 * run a Valkey cluster). The same scripts as `redis.ts`, each sent to the node that holds its
 * keys' slot: a script may only touch keys of one slot, so a decision's keys carry one hash tag,
 * the caller's (`tagKeys`; see docs/shared_state.md), unless the prefix already holds one.
 *
 * The client follows MOVED and ASK redirections and reloads the slot map itself; every call is
 * bounded by the store's deadline, and commands never queue while a node is disconnected. Each
 * master's settings are read at start and whenever a probe finds a new connection to it (a new
 * master after a failover, a restart): see `redis_settings.ts`.
 */
import { createCluster } from "redis";
import type { StoreSection } from "../sections/sections.ts";
import {
  type Store,
  type StoreNodeState,
  type StoreOptions,
  StoreUnavailableError,
} from "./types.ts";
import { scriptedStore, storeDeadline } from "./script.ts";
import { KEEPALIVE_MS } from "./redis.ts";
import { SettingsWatch } from "./redis_settings.ts";
import { replicated } from "./replicas.ts";

/** Longest pause between two reconnection attempts to one node, in milliseconds. */
const MAX_RECONNECT_DELAY = 1000;

type Cluster = ReturnType<typeof newCluster>;

/** True when Redis Cluster would hash `prefix + key` by a tag inside `prefix`. */
export function prefixHasTag(prefix: string): boolean {
  const open = prefix.indexOf("{");
  if (open < 0) return false;
  const close = prefix.indexOf("}", open + 1);
  return close > open + 1;
}

function newCluster(urls: string[], connectMs: number) {
  const first = new URL(urls[0]);
  const cluster = createCluster({
    rootNodes: urls.map((url) => ({ url })),
    // RESP2, the wire protocol the scripts' replies were written for (node-redis 6 defaults to 3).
    RESP: 2,
    // Nodes found through the cluster take their credentials and TLS from the first URL.
    defaults: {
      username: first.username ? decodeURIComponent(first.username) : undefined,
      password: first.password ? decodeURIComponent(first.password) : undefined,
      disableOfflineQueue: true,
      socket: {
        connectTimeout: connectMs,
        keepAliveInitialDelay: KEEPALIVE_MS,
        reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, MAX_RECONNECT_DELAY),
        ...(first.protocol === "rediss:" ? { tls: true as const } : {}),
      },
    },
    // The store's own deadline bounds each command (see redis.ts).
    commandOptions: { timeout: 0 },
    maxCommandRedirections: 4,
    // Discovery only; each node is connected when a command first needs it. Connecting to every
    // master at once made a gateway that starts while one master is down fail every decision.
    minimizeConnections: true,
  });
  // Without a listener an "error" event would end the process; the store logs its failures.
  cluster.on("error", () => {});
  return cluster;
}

/** A store on the Redis Cluster that `section.url` (and `section.nodes`) belong to. */
export async function redisClusterStore(
  section: StoreSection,
  options: StoreOptions = {},
): Promise<Store> {
  const urls = [section.url, ...section.nodes];
  const timeout = section.timeout;
  const connectMs = Math.max(timeout, 1000);
  let cluster: Cluster | undefined;
  /** The discovery in flight (resolves to the connected client, or undefined). */
  let attempt: Promise<Cluster | undefined> | undefined;
  let closed = false;
  const watch = new SettingsWatch(options.log);
  /** Node connections whose server's settings were read. */
  const read = new WeakSet<object>();

  /** Reads the settings of each master whose connection is new (all of them at start). */
  async function readSettings(current: Cluster): Promise<void> {
    watch.keep(current.masters.map((m) => m.address));
    await Promise.all(current.masters.map(async (master) => {
      try {
        const client = await storeDeadline(Promise.resolve(current.nodeClient(master)), timeout);
        if (read.has(client)) return;
        read.add(client);
        await watch.read(
          master.address,
          (args) => storeDeadline(client.sendCommand(args), timeout),
        );
      } catch {
        // Not reachable now: the probe tells; its settings are read once it is.
      }
    }));
  }

  /** Discovers the cluster now, or joins the discovery in flight. */
  function connect(): Promise<Cluster | undefined> {
    if (attempt) return attempt;
    const fresh = newCluster(urls, connectMs);
    attempt = storeDeadline(fresh.connect(), connectMs).then(
      () => {
        if (closed) {
          fresh.destroy();
          return undefined;
        }
        cluster = fresh;
        return fresh;
      },
      () => {
        // No node answered: a later command tries again with a fresh client.
        try {
          fresh.destroy();
        } catch {
          // Never connected.
        }
        return undefined;
      },
    ).finally(() => attempt = undefined);
    return attempt;
  }

  async function send(firstKey: string | undefined, args: string[]): Promise<unknown> {
    const current = cluster?.isOpen ? cluster : await connect();
    if (!current || closed) throw new StoreUnavailableError("Redis Cluster is not reachable");
    return await current.sendCommand(firstKey, false, args);
  }

  /**
   * PING on every master of the slot map: a decision's keys lie in the caller's slot, so a master
   * that is down fails the callers whose slots it holds while the others still answer. One key
   * would probe one master only.
   */
  async function probe(): Promise<StoreNodeState[]> {
    const current = cluster?.isOpen ? cluster : await connect();
    if (!current || closed) throw new StoreUnavailableError("Redis Cluster is not reachable");
    // Beside the PINGs, so that the condition asked after the probe includes a new master's.
    const settings = readSettings(current).catch(() => {});
    const nodes = await Promise.all(current.masters.map(async (master): Promise<StoreNodeState> => {
      // Which step failed tells an operator a master that is gone ("connect", or "PING" with the
      // client offline) from one whose connection is up but silent ("PING", no answer).
      let step = "connect";
      try {
        const client = await storeDeadline(Promise.resolve(current.nodeClient(master)), timeout);
        step = "PING";
        await storeDeadline(client.sendCommand(["PING"]), timeout);
        return { node: master.address, state: "up" };
      } catch (error) {
        const text = error instanceof Error ? error.message : String(error);
        return { node: master.address, state: "down", error: `${step}: ${text}`.slice(0, 200) };
      }
    }));
    await settings;
    return nodes;
  }

  // At start-up, give a cluster that is starting too a moment before the first requests.
  const started = await storeDeadline(connect(), Math.max(timeout, 2000)).catch(() => undefined);
  if (started) await readSettings(started);
  // store.replicas: each write waits for its master's replicas (replicas.ts), on that master.
  const needs = (key: string | undefined) => ({
    replicas: section.replicas,
    timeoutMs: section.replica_timeout,
    wait: (args: string[]) => send(key, args),
  });
  const store = scriptedStore({
    evalSha: (sha, keys, args) =>
      replicated(
        send(keys[0], ["EVALSHA", sha, String(keys.length), ...keys, ...args]),
        needs(keys[0]),
      ),
    eval: (script, keys, args) =>
      replicated(
        send(keys[0], ["EVAL", script, String(keys.length), ...keys, ...args]),
        needs(keys[0]),
      ),
    get: (key) => send(key, ["GET", key]),
    del: (key) => send(key, ["DEL", key]),
    async close() {
      if (closed) return;
      closed = true;
      const current = cluster;
      cluster = undefined;
      if (!current) return;
      const clean = await storeDeadline(current.close().then(() => true), timeout)
        .catch(() => false);
      if (!clean) current.destroy();
    },
  }, {
    kind: "redis",
    prefix: section.prefix,
    timeoutMs: timeout,
    tagKeys: !prefixHasTag(section.prefix),
    log: options.log,
  });
  return Object.assign(store, { probe, condition: () => watch.condition() });
}
