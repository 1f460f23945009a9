/**
 * The embedded durable store: one SQLite file (`node:sqlite`, built into Deno, no flag), the
 * default of main.ts and the container when the policy names no store. A decision is one
 * transaction (`BEGIN IMMEDIATE`: read the decision's keys, decide in `entries.ts`, write), run
 * synchronously, so it is atomic within the process; the write lock makes it atomic across the
 * processes and `deno serve` workers that share the file.
 *
 * WAL mode. `synchronous: normal` (the default) makes a commit durable against a crash or a
 * `kill -9` of the gateway (the WAL is in the operating system's hands when COMMIT returns) at
 * about 30 us per transaction here; `full` also survives a power loss or a kernel crash, with an
 * fsync per commit (about 200 us here, blocking the event loop). Expired rows are deleted by a
 * sweep a second that walks the table in key order, a few milliseconds at most each time: an index
 * on the end of life would find them at once, but costs every write a third of its CPU (24 against
 * 39 us a decision, measured with and without it), and a read never takes an expired row anyway.
 */
import { DatabaseSync, type StatementSync } from "node:sqlite";
import type { Logger } from "../lib/log.ts";
import {
  completeOnEntry,
  decideOnEntries,
  decisionKeys,
  type Entry,
  type EntryWrite,
  refundOnEntry,
} from "./entries.ts";
import { newStats, type Store, type StoreStats, StoreUnavailableError } from "./types.ts";

/** Options of {@link SqliteStore}. */
export interface SqliteStoreOptions {
  /** The database file (its directory is created when missing). */
  path: string;
  /** Prefix of every key. */
  prefix?: string;
  /** `full`: an fsync per commit (survives a power loss); `normal`: survives a process crash. */
  synchronous?: "normal" | "full";
  /** Longest wait for another process's write lock, in milliseconds. */
  timeoutMs?: number;
  log?: Logger;
  now?: () => number;
}

/** How often expired rows are deleted, and for how long at most each time. */
const SWEEP_EVERY_MS = 1000;
const SWEEP_BUDGET_MS = 5;
/** Rows looked at in one step of the sweep. */
const SWEEP_BATCH = 500;

/** A store in one SQLite file. */
export class SqliteStore implements Store {
  readonly kind = "sqlite";
  readonly stats: StoreStats = newStats();
  readonly path: string;
  readonly #db: DatabaseSync;
  readonly #prefix: string;
  readonly #now: () => number;
  readonly #log?: Logger;
  readonly #select: StatementSync;
  readonly #upsert: StatementSync;
  readonly #delete: StatementSync;
  readonly #scan: StatementSync;
  /** The last key the sweep looked at ("": start again from the first). */
  #swept = "";
  readonly #timer: ReturnType<typeof setInterval>;
  #lastLogged = 0;

  constructor(options: SqliteStoreOptions) {
    this.path = options.path;
    this.#prefix = options.prefix ?? "";
    this.#now = options.now ?? Date.now;
    this.#log = options.log;
    this.#db = SqliteStore.#open(options.path);
    const db = this.#db;
    const synchronous = options.synchronous === "full" ? "FULL" : "NORMAL";
    db.exec(`PRAGMA busy_timeout = ${Math.ceil(options.timeoutMs ?? 500)}`);
    db.exec("PRAGMA journal_mode = WAL");
    db.exec(`PRAGMA synchronous = ${synchronous}`);
    db.exec(`CREATE TABLE IF NOT EXISTS entries (
      key TEXT PRIMARY KEY, value TEXT NOT NULL, expires INTEGER NOT NULL) WITHOUT ROWID`);
    this.#select = db.prepare("SELECT value, expires FROM entries WHERE key = ?");
    this.#upsert = db.prepare(
      `INSERT INTO entries (key, value, expires) VALUES (?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires = excluded.expires`,
    );
    this.#delete = db.prepare("DELETE FROM entries WHERE key = ?");
    this.#scan = db.prepare(
      `SELECT key, expires FROM entries WHERE key > ? ORDER BY key LIMIT ${SWEEP_BATCH}`,
    );
    this.#timer = setInterval(() => this.#sweepExpired(), SWEEP_EVERY_MS);
    Deno.unrefTimer(this.#timer);
  }

  /** Opens the file (creating its directory), or says which file could not be opened and why. */
  static #open(path: string): DatabaseSync {
    try {
      const slash = path.lastIndexOf("/");
      if (slash > 0) Deno.mkdirSync(path.slice(0, slash), { recursive: true });
      return new DatabaseSync(path);
    } catch (error) {
      throw new StoreUnavailableError(
        `Cannot open the SQLite store "${path}": ${(error as Error).message}`,
        { cause: error },
      );
    }
  }

  #read(key: string): Entry | undefined {
    const row = this.#select.get(this.#prefix + key) as
      | { value: string; expires: number }
      | undefined;
    return row && { value: JSON.parse(row.value), expires: row.expires };
  }

  #write(write: EntryWrite): void {
    const key = this.#prefix + write.key;
    if (write.value === undefined) this.#delete.run(key);
    else this.#upsert.run(key, JSON.stringify(write.value), write.expires);
  }

  /** Runs `body` as one write transaction; a failure becomes a store outage. */
  #transaction<T>(operation: string, body: (now: number) => T): Promise<T> {
    this.stats.roundTrips++;
    try {
      this.#db.exec("BEGIN IMMEDIATE");
      try {
        const result = body(this.#now());
        this.#db.exec("COMMIT");
        return Promise.resolve(result);
      } catch (error) {
        if (this.#db.isTransaction) this.#db.exec("ROLLBACK");
        throw error;
      }
    } catch (error) {
      return Promise.reject(this.#failed(operation, error));
    }
  }

  #failed(operation: string, error: unknown): StoreUnavailableError {
    this.stats.errors++;
    const message = (error instanceof Error ? error.message : String(error)).slice(0, 200);
    // One line a second at most: a full disk must not flood the log.
    if (Date.now() - this.#lastLogged > 1000) {
      this.#lastLogged = Date.now();
      this.#log?.error({ msg: "store unavailable", store: "sqlite", operation, error: message });
    }
    return new StoreUnavailableError(`The SQLite store failed on ${operation}: ${message}`, {
      cause: error,
    });
  }

  /** Deletes expired rows, walking on from where the last sweep stopped, a few ms at most. */
  #sweepExpired(): void {
    const started = performance.now();
    try {
      while (performance.now() - started < SWEEP_BUDGET_MS) {
        const rows = this.#scan.all(this.#swept) as { key: string; expires: number }[];
        if (rows.length === 0) {
          this.#swept = "";
          return;
        }
        const now = this.#now();
        const expired = rows.filter((row) => row.expires <= now);
        if (expired.length > 0) {
          this.#db.exec("BEGIN IMMEDIATE");
          for (const row of expired) this.#delete.run(row.key);
          this.#db.exec("COMMIT");
        }
        this.#swept = rows.at(-1)!.key;
      }
    } catch {
      // Locked by another process or the disk failed: the next sweep tries again.
      if (this.#db.isTransaction) this.#db.exec("ROLLBACK");
    }
  }

  decide(decision: Parameters<Store["decide"]>[0]) {
    return this.#transaction("decide", (now) => {
      const entries = new Map<string, Entry | undefined>();
      for (const key of decisionKeys(decision)) entries.set(key, this.#read(key));
      const { verdict, writes } = decideOnEntries(decision, now, (key) => entries.get(key));
      for (const write of writes) this.#write(write);
      return verdict;
    });
  }

  complete(completion: Parameters<Store["complete"]>[0]) {
    return this.#transaction("complete", (now) => {
      const write = completeOnEntry(completion, now, (key) => this.#read(key));
      if (write) this.#write(write);
    });
  }

  refund(counter: string) {
    return this.#transaction("refund", (now) => {
      const write = refundOnEntry(counter, now, (key) => this.#read(key));
      if (write) this.#write(write);
    });
  }

  put(key: string, value: string, ttlMs: number) {
    return this.#transaction("put", (now) => {
      this.#write({ key, value, expires: now + Math.max(1, Math.ceil(ttlMs)) });
    });
  }

  get(key: string) {
    return this.#transaction("get", (now) => {
      const entry = this.#read(key);
      return entry && entry.expires > now && typeof entry.value === "string"
        ? entry.value
        : undefined;
    });
  }

  delete(key: string) {
    return this.#transaction("delete", (now) => this.#write({ key, expires: now }));
  }

  close(): Promise<void> {
    clearInterval(this.#timer);
    if (this.#db.isOpen) this.#db.close();
    return Promise.resolve();
  }
}
