/**
 * The Deno KV store (`Deno.openKv`): the platform's replicated database on Deno Deploy (no server
 * to run, every isolate and region sees one state), a KV Connect URL, or a local file elsewhere.
 * KV is still unstable: the process needs `--unstable-kv` (deno.json's `unstable` list gives it
 * to every task).
 *
 * KV has transactions without scripts, so a decision is optimistic: read its keys, decide in
 * `entries.ts`, and commit the writes with a `check` on every key read; a commit that finds a key
 * changed by another process (or a local file locked by one) reads again. Within the process, decisions that share a key take
 * turns (`key_locks.ts`), so they do not fail each other's checks. Nothing is written once the
 * store's deadline has passed.
 *
 * Values carry their own end of life: `expireIn` is a hint KV acts on lazily (an entry may be
 * read after it), so every read compares the stored end with the clock. A kept answer larger
 * than one KV value (64 KiB) is split into parts under the owner's token, written in the same
 * commit as its record.
 */
import type { Logger } from "../lib/log.ts";
import {
  completeOnEntry,
  decideOnEntries,
  decisionKeys,
  type Entry,
  type EntryReader,
  type EntryValue,
  type EntryWrite,
  type IdRecord,
  refundOnEntry,
} from "./entries.ts";
import { KeyLocks } from "./key_locks.ts";
import { storeDeadline } from "./script.ts";
import { newStats, type Store, type StoreStats, StoreUnavailableError } from "./types.ts";

/** Options of {@link kvStore}. */
export interface KvStoreOptions {
  /** A file, a KV Connect URL, or nothing for the platform's database (Deno Deploy). */
  path?: string;
  /** Prefix of every key (the first part of each KV key). */
  prefix?: string;
  /** Deadline of one store call, in milliseconds. */
  timeoutMs?: number;
  log?: Logger;
}

/** An entry as KV holds it: the value and the end of its life; a record's answer in `n` parts. */
interface Stored {
  v: EntryValue | (IdRecord & { n?: number });
  e: number;
}

/** Keys of one `getMany` at most (KV's limit). */
const GET_MANY = 10;

/** Characters of one part of a kept answer (ASCII: base64 and JSON), under KV's 64 KiB a value. */
const PART = 60_000;

/** An entry read, with the versionstamp its commit checks (null: absent). */
interface Read {
  entry?: Entry;
  versionstamp: string | null;
}

/** Opens a Deno KV store. */
export async function kvStore(options: KvStoreOptions = {}): Promise<Store> {
  if (typeof Deno.openKv !== "function") {
    throw new StoreUnavailableError(
      "Deno KV is not enabled: run with --unstable-kv (deno.json's tasks do)",
    );
  }
  const path = options.path || undefined;
  try {
    if (path && !URL.canParse(path)) {
      const slash = path.lastIndexOf("/");
      if (slash > 0) await Deno.mkdir(path.slice(0, slash), { recursive: true });
    }
    return new KvStore(await Deno.openKv(path), options);
  } catch (error) {
    throw new StoreUnavailableError(
      `Cannot open the KV store "${path ?? "(the platform's)"}": ${(error as Error).message}`,
      { cause: error },
    );
  }
}

/** A store on a Deno KV database. */
class KvStore implements Store {
  readonly kind = "kv";
  readonly stats: StoreStats = newStats();
  readonly #kv: Deno.Kv;
  readonly #prefix: string;
  readonly #timeoutMs: number;
  readonly #log?: Logger;
  readonly #locks = new KeyLocks();
  #lastLogged = 0;

  constructor(kv: Deno.Kv, options: KvStoreOptions) {
    this.#kv = kv;
    this.#prefix = options.prefix ?? "";
    this.#timeoutMs = options.timeoutMs ?? 500;
    this.#log = options.log;
  }

  #key(key: string): Deno.KvKey {
    return [this.#prefix, key];
  }

  #part(token: string, index: number): Deno.KvKey {
    return [this.#prefix, "answer", token, index];
  }

  /** Reads `keys` (and a kept answer's parts), with the versionstamps to check. */
  async #read(keys: string[]): Promise<Map<string, Read>> {
    const read = new Map<string, Read>();
    for (let i = 0; i < keys.length; i += GET_MANY) {
      const batch = keys.slice(i, i + GET_MANY);
      const found = await this.#kv.getMany<Stored[]>(batch.map((key) => this.#key(key)));
      for (const [j, result] of found.entries()) {
        const stored = result.value;
        read.set(batch[j], {
          entry: stored ? { value: stored.v, expires: stored.e } : undefined,
          versionstamp: result.versionstamp,
        });
      }
    }
    for (const { entry } of read.values()) {
      const record = entry?.value as (IdRecord & { n?: number }) | undefined;
      if (typeof record !== "object" || !record.n) continue;
      const parts: string[] = [];
      for (let i = 0; i < record.n; i += GET_MANY) {
        const keys = [];
        for (let j = i; j < Math.min(record.n, i + GET_MANY); j++) {
          keys.push(this.#part(record.t ?? "", j));
        }
        for (const part of await this.#kv.getMany<string[]>(keys)) parts.push(part.value ?? "");
      }
      const { n: _, ...rest } = record;
      entry!.value = { ...rest, a: parts.join("") };
    }
    return read;
  }

  /** Adds one write to a commit (a kept answer as its parts, beside its record). */
  #mutate(commit: Deno.AtomicOperation, write: EntryWrite, now: number): void {
    const key = this.#key(write.key);
    if (write.value === undefined) {
      commit.delete(key);
      return;
    }
    const expireIn = Math.max(1, write.expires - now);
    let value = write.value as Stored["v"];
    if (typeof value === "object" && value.a !== undefined) {
      const { a: answer, ...record } = value;
      const parts = Math.ceil(answer.length / PART);
      for (let i = 0; i < parts; i++) {
        commit.set(this.#part(record.t ?? "", i), answer.slice(i * PART, (i + 1) * PART), {
          expireIn,
        });
      }
      value = { ...record, n: parts };
    }
    commit.set(key, { v: value, e: write.expires } satisfies Stored, { expireIn });
  }

  /**
   * One transaction on `keys`: `plan` decides on the entries read, its writes are committed if
   * none of them changed meanwhile (read again otherwise), within the deadline.
   */
  #transact<T>(
    operation: string,
    keys: string[],
    plan: (now: number, read: EntryReader) => { result: T; writes: EntryWrite[] },
  ): Promise<T> {
    const deadline = performance.now() + this.#timeoutMs;
    const late = () => new StoreUnavailableError(`No answer within ${this.#timeoutMs} ms`);
    const attempt = this.#locks.run(keys, async () => {
      while (performance.now() < deadline) {
        this.stats.roundTrips++;
        const read = await this.#read(keys);
        const now = Date.now();
        const { result, writes } = plan(now, (key) => read.get(key)?.entry);
        if (writes.length === 0) return result;
        if (performance.now() >= deadline) break;
        const commit = this.#kv.atomic();
        for (const [key, { versionstamp }] of read) {
          commit.check({ key: this.#key(key), versionstamp });
        }
        for (const write of writes) this.#mutate(commit, write, now);
        try {
          if ((await commit.commit()).ok) return result;
        } catch (error) {
          // A local file another process is writing: SQLite's lock, without a busy timeout.
          if (!String((error as Error)?.message).includes("database is locked")) throw error;
          await new Promise((resolve) => setTimeout(resolve, 1 + Math.random() * 4));
        }
      }
      throw late();
    }, { ms: this.#timeoutMs, late });
    return storeDeadline(attempt, this.#timeoutMs).catch((error) => {
      throw this.#failed(operation, error);
    });
  }

  #failed(operation: string, error: unknown): StoreUnavailableError {
    this.stats.errors++;
    const message = (error instanceof Error ? error.message : String(error)).slice(0, 200);
    // One line a second at most: an outage must not flood the log.
    if (Date.now() - this.#lastLogged > 1000) {
      this.#lastLogged = Date.now();
      this.#log?.error({ msg: "store unavailable", store: "kv", operation, error: message });
    }
    return error instanceof StoreUnavailableError
      ? error
      : new StoreUnavailableError(`The KV store failed on ${operation}: ${message}`, {
        cause: error,
      });
  }

  decide(decision: Parameters<Store["decide"]>[0]) {
    return this.#transact("decide", decisionKeys(decision), (now, read) => {
      const { verdict, writes } = decideOnEntries(decision, now, read);
      return { result: verdict, writes };
    });
  }

  complete(completion: Parameters<Store["complete"]>[0]) {
    return this.#transact("complete", [completion.key], (now, read) => {
      const write = completeOnEntry(completion, now, read);
      return { result: undefined, writes: write ? [write] : [] };
    });
  }

  refund(counter: string) {
    return this.#transact("refund", [counter], (now, read) => {
      const write = refundOnEntry(counter, now, read);
      return { result: undefined, writes: write ? [write] : [] };
    });
  }

  put(key: string, value: string, ttlMs: number) {
    return this.#transact("put", [key], (now) => ({
      result: undefined,
      writes: [{ key, value, expires: now + Math.max(1, Math.ceil(ttlMs)) }],
    }));
  }

  get(key: string) {
    return this.#transact("get", [key], (now, read) => {
      const entry = read(key);
      const live = entry && entry.expires > now && typeof entry.value === "string";
      return { result: live ? entry.value as string : undefined, writes: [] };
    });
  }

  delete(key: string) {
    return this.#transact("delete", [key], (now) => ({
      result: undefined,
      writes: [{ key, expires: now }],
    }));
  }

  close(): Promise<void> {
    try {
      this.#kv.close();
    } catch {
      // Already closed.
    }
    return Promise.resolve();
  }
}
