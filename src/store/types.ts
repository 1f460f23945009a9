/**
 * The shared-state store's contract: one small interface with five backends (memory, SQLite and
 * Deno KV, Redis over TCP, Upstash over HTTP), chosen by the policy's `store` section (see
 * `mod.ts`).
 *
 * Everything the hot path needs (X-Request-ID idempotency, every rate limit, consent frequency)
 * is one {@link Decision}, decided atomically in one round trip with the store's clock.
 */
import type { Logger } from "../lib/log.ts";

/** The idempotency part of a decision: claim an X-Request-ID, or find its earlier use. */
export interface IdempotencyPart {
  /** Logical key (TPP and X-Request-ID). */
  key: string;
  /** replay: the same request gets the stored answer; unique: any reuse is a duplicate. */
  mode: "replay" | "unique";
  /** Digest of method, path and body. */
  fingerprint: string;
  /** Owner token of the in-flight marker this request would set. */
  token: string;
  /** False in report mode: a reuse does not stop the rest of the decision. */
  enforce: boolean;
  /**
   * How long the request may stay in flight, in milliseconds. A marker still in flight after
   * that belongs to a request whose end was never recorded (its instance died, or the store was
   * down when the answer came): its outcome is unknown, and the id is never executed again.
   */
  inflightMs: number;
  /** How long a used id is remembered (a marker included), in milliseconds. */
  retentionMs: number;
}

/** One rate limit (GCRA): at most `burst` at once, refilling at `limit` per `windowMs`. */
export interface LimitPart {
  /** The limit's name in the policy (for texts; not used by the store). */
  name: string;
  key: string;
  limit: number;
  windowMs: number;
  burst: number;
  enforce: boolean;
  /**
   * Requests asked for at once (default 1): this one and a lease the gateway keeps for the ones
   * that follow. The store grants at most a quarter of what the limit allows now, at least one.
   */
  want?: number;
}

/** One calendar day of the bank's time zone, with the counter key of that day. */
export interface DayWindow {
  key: string;
  /** Start of the day, milliseconds since the epoch. */
  start: number;
  /** Start of the next day. */
  end: number;
}

/** The consent frequency part: count one read of a resource under a consent. */
export interface FrequencyPart {
  /** Key of the learnt consent record. */
  consentKey: string;
  /** Candidate days around the gateway's clock; the store's clock picks one. */
  days: DayWindow[];
  /** The largest frequencyPerDay allowed for this TPP. */
  max: number;
  /** Reads a day for consents never seen; 0: not counted. */
  unknownLimit: number;
  psuInitiated: boolean;
  enforce: boolean;
}

/** Everything one request asks of the store before it is forwarded. */
export interface Decision {
  idempotency?: IdempotencyPart;
  limits: LimitPart[];
  frequency?: FrequencyPart;
  /**
   * Who the decision's writes belong to: the TPP id, or `ip:<network>` for a caller without one
   * (`callerId`). A bounded store gives each owner a share of its room (memory: `ownerShare`);
   * the others may ignore it.
   */
  owner?: string;
}

/**
 * How an operation builds its {@link Decision} from a request: one part per check of shared
 * state, filled in by those checks when the operation's chain is built.
 */
export interface DecisionPlan<Request> {
  /** The decision's owner (the first check of shared state to fill the plan sets it). */
  owner?: (request: Request) => string;
  idempotency?: (request: Request) => IdempotencyPart | undefined;
  limits?: (request: Request) => LimitPart[];
  frequency?: (request: Request) => FrequencyPart | undefined;
}

/** A stored upstream answer, replayed for a repeated request. */
export interface StoredResponse {
  status: number;
  headers: [string, string][];
  /** Base64 of the body bytes. */
  body: string;
}

/**
 * What the store found for an X-Request-ID:
 * - `claimed`: first use, now marked in flight for this request
 * - `free`: first use, not claimed because another part of the decision rejected the request
 * - `replay`: the same request was answered before (`response`)
 * - `mismatch`: the id was used for another request
 * - `inflight`: the same request is still being processed
 * - `duplicate`: the id was used before (unique mode)
 * - `gone`: the same request was answered, but the answer was too large to keep
 * - `unknown`: the same request was in flight longer than `inflightMs` and its end was never
 *   recorded: it may have been executed, so it is not executed again
 */
export type IdempotencyOutcome =
  | "claimed"
  | "free"
  | "replay"
  | "mismatch"
  | "inflight"
  | "duplicate"
  | "gone"
  | "unknown";

export interface LimitVerdict {
  allowed: boolean;
  /** Requests still allowed now (after this one, when allowed). */
  remaining: number;
  /** Milliseconds until the quota is full again. */
  resetMs: number;
  /** Milliseconds until a request would be allowed (0 when allowed). */
  retryMs: number;
  /** Requests granted when allowed: this one and the lease's (absent: 1). */
  granted?: number;
}

export interface FrequencyVerdict {
  /** False when the read is not counted (PSU-initiated on a recurring consent, unknown consent). */
  counted: boolean;
  allowed: boolean;
  /** The effective limit for the day. */
  limit: number;
  /** Reads counted today, this one included when allowed. */
  used: number;
  /** Milliseconds until the day ends. */
  retryMs: number;
  /** The consent was learnt by the gateway. */
  known: boolean;
  /**
   * The day counter this read was counted in (its key in the decision), when it was: counted,
   * allowed and not blocked. {@link Store.refund} takes it back.
   */
  counter?: string;
}

/** The store's answer to a {@link Decision}. */
export interface Verdict {
  /** The store's clock, milliseconds since the epoch. */
  now: number;
  /** An enforcing part rejected the request: nothing was counted or claimed. */
  blocked: boolean;
  idempotency?: { outcome: IdempotencyOutcome; response?: StoredResponse };
  /** One per limit of the decision; empty when the idempotency part stopped the decision. */
  limits: LimitVerdict[];
  frequency?: FrequencyVerdict;
}

const OUTCOMES: ReadonlySet<string> = new Set<IdempotencyOutcome>([
  "claimed",
  "free",
  "replay",
  "mismatch",
  "inflight",
  "duplicate",
  "gone",
  "unknown",
]);

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function count(value: unknown): boolean {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

function storedResponseProblem(response: StoredResponse | undefined): string | undefined {
  if (!response) return "a replay without its answer";
  const { status, headers, body } = response;
  if (!Number.isInteger(status) || status < 200 || status > 599) return `stored status ${status}`;
  const pairs = Array.isArray(headers) &&
    headers.every((pair) =>
      Array.isArray(pair) && pair.length === 2 && pair.every((part) => typeof part === "string")
    );
  if (!pairs) return "stored headers that are not name/value pairs";
  if (typeof body !== "string" || body.length % 4 !== 0 || !BASE64.test(body)) {
    return "a stored body that is not base64";
  }
  return undefined;
}

/**
 * Why `verdict` is not one a store can give to `decision` (`undefined` when it is one): an
 * X-Request-ID outcome that is not one of the known ones, a part missing or one too many, a count
 * that is not a count, or `blocked` disagreeing with the parts (blocked exactly when an enforcing
 * part rejected the request, and only then is an X-Request-ID left `free`). The checks treat any
 * other verdict as a store failure: their `fail` mode applies, and nothing is taken for "go".
 */
export function verdictProblem(decision: Decision, verdict: Verdict): string | undefined {
  if (!count(verdict.now)) return `store clock ${verdict.now}`;
  if (typeof verdict.blocked !== "boolean") return "blocked is not a boolean";
  // The X-Request-ID part stopped the decision: no limit or counter was looked at.
  let stopped = false;
  let rejected = false;
  const idempotency = verdict.idempotency;
  if (decision.idempotency) {
    const outcome = idempotency?.outcome;
    if (outcome === undefined || !OUTCOMES.has(outcome)) {
      return `the X-Request-ID outcome "${outcome}"`;
    }
    if (outcome === "replay") {
      const problem = storedResponseProblem(idempotency!.response);
      if (problem) return problem;
      stopped = true;
    } else if (outcome !== "claimed" && outcome !== "free" && decision.idempotency.enforce) {
      stopped = rejected = true;
    }
  } else if (idempotency !== undefined) {
    return "an X-Request-ID outcome without an X-Request-ID";
  }
  const limits = stopped ? 0 : decision.limits.length;
  if (verdict.limits.length !== limits) {
    return `${verdict.limits.length} limit verdicts for ${limits} limits`;
  }
  for (const [i, limit] of verdict.limits.entries()) {
    const counts = [limit.remaining, limit.resetMs, limit.retryMs].every(count);
    if (typeof limit.allowed !== "boolean" || !counts) return `the verdict of limit ${i + 1}`;
    const granted = limit.granted ?? 1;
    if (
      limit.allowed &&
      !(Number.isInteger(granted) && granted >= 1 && granted <= (decision.limits[i].want ?? 1))
    ) {
      return `the grant of limit ${i + 1}`;
    }
    if (!limit.allowed && decision.limits[i].enforce) rejected = true;
  }
  const frequency = verdict.frequency;
  if (decision.frequency && !stopped) {
    if (!frequency) return "no verdict on the consent counter";
    const flags = [frequency.counted, frequency.allowed, frequency.known]
      .every((flag) => typeof flag === "boolean");
    const counts = [frequency.limit, frequency.used, frequency.retryMs].every(count);
    if (!flags || !counts) return "the verdict on the consent counter";
    if (!frequency.allowed && !frequency.counted) return "an uncounted read that is not allowed";
    if (!frequency.allowed && decision.frequency.enforce) rejected = true;
    const incremented = frequency.counted && frequency.allowed && !verdict.blocked;
    if ((frequency.counter !== undefined) !== incremented) return "the counter of a counted read";
    if (
      frequency.counter !== undefined &&
      !decision.frequency.days.some((day) => day.key === frequency.counter)
    ) {
      return "a day counter that was not asked for";
    }
  } else if (frequency !== undefined) {
    return "a verdict on a consent counter that was not asked for";
  }
  if (verdict.blocked !== rejected) {
    return rejected ? "a rejection that is not blocked" : "blocked without a rejection";
  }
  if (idempotency?.outcome === "free" && !rejected) return "an X-Request-ID left free";
  if (idempotency?.outcome === "claimed" && rejected) return "an X-Request-ID claimed when blocked";
  return undefined;
}

/** The second write of an idempotent request, once the upstream answered (or failed). */
export interface Completion {
  key: string;
  token: string;
  /** done: keep the answer for replay; gone: remember it was answered; release: forget the id. */
  action: "done" | "gone" | "release";
  response?: StoredResponse;
  retentionMs: number;
}

/** Counters of a store, for the bench and the logs. */
export interface StoreStats {
  /** Requests sent to the store (a script fallback after NOSCRIPT counts twice). */
  roundTrips: number;
  /** Store calls that failed (timeouts, connection errors). */
  errors: number;
  /** Requests let through by a `fail: open` check while the store was unavailable. */
  failOpen: number;
}

/** The store could not be reached or did not answer in time. */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "StoreUnavailableError";
  }
}

/** The shared-state store. */
export interface Store {
  readonly kind: "memory" | "sqlite" | "kv" | "redis" | "upstash";
  readonly stats: StoreStats;
  /**
   * True on a Redis Cluster whose prefix has no hash tag: a decision's keys must then carry one
   * tag (the caller's, see `slotTag` in middleware/_shared_state.ts) to share a slot, because a
   * script can only touch keys of one slot.
   */
  readonly tagKeys?: boolean;
  /** Entries held, where the backend knows without a round trip (memory). */
  readonly size?: number;
  /** Decides a request atomically, in one round trip. */
  decide(decision: Decision): Promise<Verdict>;
  /** Stores or releases an idempotency record, if `token` still owns it. */
  complete(completion: Completion): Promise<void>;
  /**
   * Takes back one read counted in a day counter (`FrequencyVerdict.counter`): the core did not
   * answer it with 2xx. Never below zero; the counter keeps its expiry.
   */
  refund(counter: string): Promise<void>;
  /**
   * Keeps a small value for `ttlMs` (the learnt consents and consent scopes), for `owner` (as
   * {@link Decision.owner}; a store without shares ignores it).
   */
  put(key: string, value: string, ttlMs: number, owner?: string): Promise<void>;
  /** A value kept with `put`, or `undefined` when there is none (or it expired). */
  get(key: string): Promise<string | undefined>;
  delete(key: string): Promise<void>;
  /**
   * Probes every node that holds part of the data (a Redis Cluster's masters), each within the
   * store's deadline; absent where one node holds it all (a write of one key probes that one).
   */
  probe?(): Promise<StoreNodeState[]>;
  /**
   * What may make the store refuse writes or forget what it holds, known without a round trip
   * (read at start and on reconnect where the server must be asked); absent: nothing to say.
   */
  condition?(): StoreCondition;
  close(): Promise<void>;
}

/** A store's own account of its state (`Store.condition`), for readiness, metrics and logs. */
export interface StoreCondition {
  /**
   * Why the store refuses writes or may forget executed X-Request-IDs, one sentence each (a full
   * memory store, a Redis without append-only persistence or with an evicting maxmemory-policy).
   */
  warnings: string[];
  /** The server's settings as read (`appendonly`, `maxmemory-policy`; per node on a cluster). */
  settings?: Record<string, string>;
  /** Why the settings could not be read (a managed Redis that refuses CONFIG). */
  unknown?: string;
  /** Entries and bytes held against the bounds, and writes refused for want of room (memory). */
  capacity?: {
    entries: number;
    max_entries: number;
    bytes: number;
    max_bytes: number;
    refused: number;
  };
}

/** One store node's answer to a probe. */
export interface StoreNodeState {
  /** host:port */
  node: string;
  state: "up" | "down";
  error?: string;
}

/** Options of {@link createStore}. */
export interface StoreOptions {
  log?: Logger;
  /** Clock of the memory backend (the others use the store's clock). */
  now?: () => number;
}

/** The GCRA emission interval of a limit, in whole microseconds (rounded up: never looser). */
export function limitPeriod(limit: LimitPart): number {
  return Math.ceil(limit.windowMs * 1000 / limit.limit);
}

/** New counters. */
export function newStats(): StoreStats {
  return { roundTrips: 0, errors: 0, failOpen: 0 };
}

/** A request's decision: the verdict, or why the store could not give one. */
export type DecisionOutcome =
  | { decision: Decision; verdict: Verdict; error?: undefined }
  | { decision: Decision; verdict?: undefined; error: StoreUnavailableError };
