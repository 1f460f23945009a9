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

  /**
   * `send` for items asked for together, where the store batches them per turn (`batch` above 1)
   * or one by one: each caller gets its own reply, or throws the call's error, logged once as the
   * operation `name` gives for the items.
   */
  function perItem<T>(
    send: (items: readonly T[]) => Promise<unknown[]>,
    name: (items: readonly T[]) => string,
  ): (item: T) => Promise<unknown> {
    async function all(items: readonly T[]): Promise<unknown[]> {
      try {
        return await send(items);
      } catch (error) {
        try {
          failed(name(items), error);
        } catch (thrown) {
          return items.map(() => thrown);
        }
      }
    }
    const each = (options.batch ?? 1) > 1
      ? turnBatches(all, options.batch!)
      : async (item: T) => (await all([item]))[0];
    return async (item: T) => {
      const reply = await each(item);
      if (reply instanceof Error) throw reply;
      return reply;
    };
  }

  /** `replies`, when it is one per item; else what `sender` answered is no answer. */
  function onePerItem(replies: unknown, count: number, sender: string): unknown[] {
    if (!Array.isArray(replies) || replies.length !== count) {
      throw new Error(`${sender} answered in an unexpected form`);
    }
    return replies;
  }

  /** One script call per turn's decisions: a verdict each. */
  const decide = perItem(async (decisions: readonly Decision[]) => {
    const { keys, args } = encodeDecisions(decisions, prefix);
    return batchReplies(await run(DECIDE_SCRIPT, keys, args), decisions.length);
  }, () => "decide");

  /** One script call per turn's writes after answers (completions, puts): complete, put or both. */
  const write = perItem(async (writes: readonly Write[]) => {
    const { keys, args } = encodeWrites(writes, prefix);
    return onePerItem(await run(WRITE_SCRIPT, keys, args), writes.length, "The write script");
  }, (writes) => {
    const kinds = new Set(writes.map((item) => "completion" in item ? "complete" : "put"));
    return [...kinds].join(" and ");
  });

  /** One MGET per turn's reads (a consent's scope per account read, a payment's owner). */
  const read = (options.batch ?? 1) > 1 && transport.getMany
    ? perItem(async (keys: readonly string[]) => {
      const values = await bounded(() => transport.getMany!(keys.map((key) => prefix + key)));
      return onePerItem(values, keys.length, "MGET");
    }, () => "get")
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
    decide: async (decision) => decodeVerdict(await decide(decision), decision),
    async complete(completion: Completion) {
      await write({ completion });
    },
    async refund(counter) {
      try {
        await run(REFUND_SCRIPT, [prefix + counter], []);
      } catch (error) {
        failed("refund", error);
      }
    },
    async put(key, value, ttlMs) {
      await write({ key, value, ttlMs });
    },
    async get(key) {
      const value = await read(key);
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
