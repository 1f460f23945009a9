/**
 * A {@link Store} over any transport that can run the Lua scripts of `lua/` (node-redis over TCP,
 * Upstash over HTTP). Scripts go as EVALSHA, falling back to EVAL when the server answers NOSCRIPT
 * (after a restart). Where the transport allows it (`batch` above 1), the decisions asked for in
 * one turn of the event loop go as one script call, the writes after answers (completions, puts)
 * as another, and the reads as one MGET: the requests that a turn's I/O woke share a round trip
 * and the server's work of running a command, and each is decided as atomically as alone.
 */
import { setImmediate } from "node:timers";
import { withDeadline } from "../lib/deadline.ts";
import type { Logger } from "../lib/log.ts";
import {
  type Completion,
  type Decision,
  newStats,
  type Store,
  type StoreStats,
  StoreUnavailableError,
} from "./types.ts";
import { batchReplies, DECIDE_SCRIPT, decodeVerdict, encodeDecisions } from "./lua/decide.ts";
import { encodeWrites, type Write, WRITE_SCRIPT } from "./lua/write.ts";
import { REFUND_SCRIPT } from "./lua/refund.ts";

/** What a backend must offer to run the scripts. */
export interface ScriptTransport {
  evalSha(sha: string, keys: string[], args: string[]): Promise<unknown>;
  eval(script: string, keys: string[], args: string[]): Promise<unknown>;
  get(key: string): Promise<unknown>;
  /** The values of `keys` in one command (MGET), where every key may go to one server. */
  getMany?(keys: string[]): Promise<unknown>;
  del(key: string): Promise<unknown>;
  close(): Promise<void>;
}

/** `promise`, or a {@link StoreUnavailableError} after `ms` milliseconds (see `src/deadline.ts`). */
export function storeDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  return withDeadline(promise, ms, () => new StoreUnavailableError(`No answer within ${ms} ms`));
}

async function sha1(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Options of {@link scriptedStore}. */
export interface ScriptedStoreOptions {
  kind: "redis" | "upstash";
  /** Prefix of every key. */
  prefix: string;
  /** Deadline of one store call, in milliseconds. */
  timeoutMs: number;
  /** See {@link Store.tagKeys}. */
  tagKeys?: boolean;
  /**
   * Most decisions sent in one script call, and reads in one MGET (default 1: each alone). Only
   * where every key of a batch may go to one server in one command: not a cluster, whose keys
   * live in many slots.
   */
  batch?: number;
  log?: Logger;
}

/** A {@link Store} over a script transport: one script call per decision, or per turn's batch. */
export function scriptedStore(transport: ScriptTransport, options: ScriptedStoreOptions): Store {
  const { prefix, log } = options;
  const stats: StoreStats = newStats();
  const shas = new Map<string, Promise<string>>();
  let lastLogged = 0;

  function failed(operation: string, error: unknown): never {
    stats.errors++;
    const message = error instanceof Error ? error.message : String(error);
    // One line a second at most: an outage must not flood the log.
    if (Date.now() - lastLogged > 1000) {
      lastLogged = Date.now();
      log?.error({
        msg: "store unavailable",
        store: options.kind,
        operation,
        error: message.slice(0, 200),
      });
    }
    throw error instanceof StoreUnavailableError
      ? error
      : new StoreUnavailableError(`The store failed on ${operation}: ${message.slice(0, 200)}`, {
        cause: error,
      });
  }

  /** One round trip, never longer than the deadline (whatever the client library does). */
  function bounded<T>(call: () => Promise<T>): Promise<T> {
    stats.roundTrips++;
    return storeDeadline(call(), options.timeoutMs);
  }

  async function run(script: string, keys: string[], args: string[]): Promise<unknown> {
    let sha = shas.get(script);
    if (!sha) shas.set(script, sha = sha1(script));
    const digest = await sha;
    try {
      return await bounded(() => transport.evalSha(digest, keys, args));
    } catch (error) {
      if (!String((error as Error)?.message ?? error).includes("NOSCRIPT")) throw error;
    }
    return await bounded(() => transport.eval(script, keys, args));
  }

  /** One script call for `decisions`: a verdict, or the error of its call, for each. */
  async function decideAll(decisions: readonly Decision[]): Promise<unknown[]> {
    const { keys, args } = encodeDecisions(decisions, prefix);
    try {
      return batchReplies(await run(DECIDE_SCRIPT, keys, args), decisions.length);
    } catch (error) {
      try {
        failed("decide", error);
      } catch (thrown) {
        return decisions.map(() => thrown);
      }
    }
  }

  const decide = (options.batch ?? 1) > 1
    ? turnBatches(decideAll, options.batch!)
    : async (decision: Decision) => (await decideAll([decision]))[0];

  /** The reads of one turn in one MGET (a consent's scope per account read, a payment's owner). */
  async function getAll(keys: readonly string[]): Promise<unknown[]> {
    try {
      const values = await bounded(() => transport.getMany!(keys.map((key) => prefix + key)));
      if (!Array.isArray(values) || values.length !== keys.length) {
        throw new Error("MGET answered in an unexpected form");
      }
      return values;
    } catch (error) {
      try {
        failed("get", error);
      } catch (thrown) {
        return keys.map(() => thrown);
      }
    }
  }

  /** One script call for the writes after answers (completions, puts): a reply or error each. */
  async function writeAll(writes: readonly Write[]): Promise<unknown[]> {
    const { keys, args } = encodeWrites(writes, prefix);
    try {
      const replies = await run(WRITE_SCRIPT, keys, args);
      if (!Array.isArray(replies) || replies.length !== writes.length) {
        throw new Error("The write script answered in an unexpected form");
      }
      return replies;
    } catch (error) {
      // Named by what the batch held: complete, put, or both.
      const kinds = new Set(writes.map((item) => "completion" in item ? "complete" : "put"));
      try {
        failed([...kinds].join(" and "), error);
      } catch (thrown) {
        return writes.map(() => thrown);
      }
    }
  }

  const write = (options.batch ?? 1) > 1
    ? turnBatches(writeAll, options.batch!)
    : async (item: Write) => (await writeAll([item]))[0];

  async function written(item: Write): Promise<void> {
    const reply = await write(item);
    if (reply instanceof Error) throw reply;
  }

  const read = (options.batch ?? 1) > 1 && transport.getMany
    ? turnBatches(getAll, options.batch!)
    : async (key: string) => {
      try {
        return await bounded(() => transport.get(prefix + key));
      } catch (error) {
        failed("get", error);
      }
    };

  return {
    kind: options.kind,
    tagKeys: options.tagKeys,
    stats,
    async decide(decision) {
      const reply = await decide(decision);
      if (reply instanceof Error) throw reply;
      return decodeVerdict(reply, decision);
    },
    complete: (completion: Completion) => written({ completion }),
    async refund(counter) {
      try {
        await run(REFUND_SCRIPT, [prefix + counter], []);
      } catch (error) {
        failed("refund", error);
      }
    },
    put: (key, value, ttlMs) => written({ key, value, ttlMs }),
    async get(key) {
      const value = await read(key);
      if (value instanceof Error) throw value;
      return typeof value === "string" ? value : undefined;
    },
    async delete(key) {
      try {
        await bounded(() => transport.del(prefix + key));
      } catch (error) {
        failed("delete", error);
      }
    },
    close: () => transport.close(),
  };
}

/**
 * Collects what is asked for until the event loop's next turn (`setImmediate`: after the I/O
 * callbacks of this one) and sends it in calls of at most `max`; each caller gets its own part of
 * the replies. A failed call is each of its items' error.
 */
function turnBatches<T>(
  send: (items: readonly T[]) => Promise<unknown[]>,
  max: number,
): (item: T) => Promise<unknown> {
  type Waiting = { item: T; resolve: (reply: unknown) => void };
  let pending: Waiting[] = [];
  let scheduled = false;
  function flush(): void {
    scheduled = false;
    const batch = pending;
    pending = [];
    for (let start = 0; start < batch.length; start += max) {
      const part = batch.slice(start, start + max);
      send(part.map((w) => w.item)).then(
        (replies) => part.forEach((w, i) => w.resolve(replies[i])),
        (error) => part.forEach((w) => w.resolve(error)),
      );
    }
  }
  return (item) =>
    new Promise((resolve) => {
      pending.push({ item, resolve });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
}
