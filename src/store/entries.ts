/**
 * A decision made on entries read from a key-value store that has transactions but no scripts
 * (SQLite, Deno KV): read the keys a decision names, decide here, write back in the same
 * transaction. The semantics are those of `memory.ts` and `lua/decide.ts`, as a pure function of
 * the entries read and the store's clock, so that both durable stores share one implementation
 * and the contract suite holds them to the others. The memory store decides with it too, on its
 * own entries.
 *
 * Every entry carries the end of its life (`expires`, milliseconds since the epoch): neither
 * SQLite nor Deno KV (whose `expireIn` is lazy) forgets an entry at the moment it expires, so an
 * entry read past its end counts as absent.
 */
import {
  type Completion,
  type Decision,
  type FrequencyPart,
  type FrequencyVerdict,
  type IdempotencyOutcome,
  limitPeriod,
  type LimitVerdict,
  type StoredResponse,
  type Verdict,
} from "./types.ts";

/** An X-Request-ID record, as `lua/decide.ts` describes it (`a`: the kept answer, packed). */
export interface IdRecord {
  s: "inflight" | "done" | "gone" | "seen";
  f?: string;
  t?: string;
  /** End of the in-flight time, milliseconds since the epoch. */
  u?: number;
  a?: string;
}

/** A value kept: a GCRA arrival time (us) or a day's count, a learnt consent, a record. */
export type EntryValue = number | string | IdRecord;

/** An entry as read: its value and the end of its life. */
export interface Entry {
  value: EntryValue;
  expires: number;
}

/** One write of a transaction: `value` until `expires`, or the key deleted (`value` undefined). */
export interface EntryWrite {
  key: string;
  value?: EntryValue;
  expires: number;
  /**
   * A rate-limit counter: a bounded store may evict it. Anything else is a decision (an
   * X-Request-ID record, a consent's day counter) and is kept for its retention.
   */
  evictable?: true;
}

/** The entry of `key` among those read, unless it expired. */
export type EntryReader = (key: string) => Entry | undefined;

/**
 * A kept answer as one string (JSON of status, headers and body): a store holds every id for its
 * retention, a day by default, and in the memory store a header list is a heap object per header
 * for the collector to trace on every full collection; a string is one object it does not look
 * into.
 */
export function packAnswer(response: StoredResponse): string {
  return JSON.stringify([response.status, response.headers, response.body]);
}

/** The answer {@link packAnswer} packed. */
export function unpackAnswer(packed: string): StoredResponse {
  const [status, headers, body] = JSON.parse(packed) as [number, [string, string][], string];
  return { status, headers, body };
}

/** The candidate day the store's clock falls in (the middle one when none does, as the script). */
function today(frequency: FrequencyPart, now: number) {
  return frequency.days.find((d) => d.start <= now && now < d.end) ??
    frequency.days[Math.floor(frequency.days.length / 2)];
}

/**
 * The keys a decision reads, each once: the X-Request-ID, each limit, the consent and every
 * candidate day (the store's clock picks one only once they are read).
 */
export function decisionKeys(decision: Decision): string[] {
  const keys: string[] = [];
  if (decision.idempotency) keys.push(decision.idempotency.key);
  for (const limit of decision.limits) keys.push(limit.key);
  if (decision.frequency) {
    keys.push(decision.frequency.consentKey, ...decision.frequency.days.map((day) => day.key));
  }
  return [...new Set(keys)];
}

/** The value of a live entry. */
function valueOf(read: EntryReader, key: string, now: number): EntryValue | undefined {
  const entry = read(key);
  return entry && entry.expires > now ? entry.value : undefined;
}

/** The outcome of an X-Request-ID given its record (as the script decides it). */
function outcomeOf(
  record: IdRecord | undefined,
  part: NonNullable<Decision["idempotency"]>,
  now: number,
): IdempotencyOutcome {
  if (!record) return "free";
  if (part.mode === "unique" || record.s === "seen") return "duplicate";
  if (record.f !== part.fingerprint) return "mismatch";
  if (record.s === "inflight") return now >= (record.u ?? 0) ? "unknown" : "inflight";
  if (record.s === "done") return "replay";
  if (record.s === "gone") return "gone";
  return "duplicate";
}

/**
 * Decides `decision` on the entries `read` gives (those of {@link decisionKeys}) at the store's
 * clock `now`: the verdict, and the writes that make it so (none when blocked or replayed).
 */
export function decideOnEntries(
  decision: Decision,
  now: number,
  read: EntryReader,
): { verdict: Verdict; writes: EntryWrite[] } {
  const nowUs = now * 1000;
  const verdict: Verdict = { now, blocked: false, limits: [] };
  const writes: EntryWrite[] = [];
  const idem = decision.idempotency;
  if (idem) {
    const record = valueOf(read, idem.key, now) as IdRecord | undefined;
    const outcome = outcomeOf(record, idem, now);
    verdict.idempotency = { outcome };
    if (outcome === "replay") {
      verdict.idempotency.response = unpackAnswer(record!.a!);
      return { verdict, writes };
    }
    if (outcome !== "free" && idem.enforce) {
      verdict.blocked = true;
      return { verdict, writes };
    }
  }

  const tats: number[] = [];
  for (const limit of decision.limits) {
    const period = limitPeriod(limit);
    const tau = period * limit.burst;
    const stored = valueOf(read, limit.key, now);
    const tat = Math.max(typeof stored === "number" ? stored : nowUs, nowUs);
    let next = tat + period;
    const allowAt = next - tau;
    let result: LimitVerdict;
    if (nowUs >= allowAt) {
      // Requests allowed now, this one included; a lease takes at most a quarter of them.
      const allowed = Math.floor((nowUs - allowAt) / period + 1e-6) + 1;
      const granted = Math.max(1, Math.min(limit.want ?? 1, Math.floor(allowed / 4)));
      next = tat + granted * period;
      result = {
        allowed: true,
        remaining: allowed - granted,
        resetMs: Math.ceil((next - nowUs) / 1000),
        retryMs: 0,
        granted,
      };
    } else {
      result = {
        allowed: false,
        remaining: 0,
        resetMs: Math.ceil((tat - nowUs) / 1000),
        retryMs: Math.ceil((allowAt - nowUs) / 1000),
      };
      if (limit.enforce) verdict.blocked = true;
    }
    tats.push(next);
    verdict.limits.push(result);
  }

  const frequency = decision.frequency;
  let day: { key: string; end: number } | undefined;
  if (frequency) {
    const consent = valueOf(read, frequency.consentKey, now);
    const match = typeof consent === "string" ? /^([01])\|(\d+)$/.exec(consent) : null;
    const result: FrequencyVerdict = {
      counted: false,
      allowed: true,
      limit: 0,
      used: 0,
      retryMs: 0,
      known: match !== null,
    };
    if (match) {
      if (match[1] === "0") {
        result.counted = true;
        result.limit = 1;
      } else if (!frequency.psuInitiated) {
        result.counted = true;
        result.limit = Math.min(Number(match[2]), frequency.max);
      }
    } else if (frequency.unknownLimit > 0 && !frequency.psuInitiated) {
      result.counted = true;
      result.limit = frequency.unknownLimit;
    }
    if (result.counted) {
      day = today(frequency, now);
      const used = valueOf(read, day.key, now);
      result.used = typeof used === "number" ? used : 0;
      result.retryMs = day.end - now;
      if (result.used >= result.limit) {
        result.allowed = false;
        if (frequency.enforce) verdict.blocked = true;
      }
    }
    verdict.frequency = result;
  }

  if (verdict.blocked) return { verdict, writes };
  decision.limits.forEach((limit, i) => {
    if (verdict.limits[i].allowed) {
      writes.push({
        key: limit.key,
        value: tats[i],
        expires: now + Math.ceil((tats[i] - nowUs) / 1000) + 1,
        evictable: true,
      });
    }
  });
  const counted = verdict.frequency;
  if (day && counted?.counted && counted.allowed) {
    counted.used++;
    counted.counter = day.key;
    writes.push({ key: day.key, value: counted.used, expires: day.end + 3_600_000 });
  }
  if (idem && verdict.idempotency?.outcome === "free") {
    writes.push(
      idem.mode === "replay"
        ? {
          key: idem.key,
          value: { s: "inflight", f: idem.fingerprint, t: idem.token, u: now + idem.inflightMs },
          expires: now + Math.max(idem.inflightMs, idem.retentionMs),
        }
        : { key: idem.key, value: { s: "seen" }, expires: now + idem.retentionMs },
    );
    verdict.idempotency.outcome = "claimed";
  }
  return { verdict, writes };
}

/**
 * The write of a completion, given the X-Request-ID record read (none when another request owns
 * it or it expired).
 */
export function completeOnEntry(
  completion: Completion,
  now: number,
  read: EntryReader,
): EntryWrite | undefined {
  const record = valueOf(read, completion.key, now) as IdRecord | undefined;
  if (typeof record !== "object" || record.t !== completion.token) return undefined;
  if (completion.action === "release") return { key: completion.key, expires: now };
  const response = completion.response;
  const done: IdRecord = { s: completion.action, f: record.f, t: record.t };
  if (response) done.a = packAnswer(response);
  return { key: completion.key, value: done, expires: now + completion.retentionMs };
}

/** The write of a refund: one read less in a day counter, never below zero, the same expiry. */
export function refundOnEntry(counter: string, now: number, read: EntryReader) {
  const entry = read(counter);
  if (!entry || entry.expires <= now || typeof entry.value !== "number" || entry.value <= 0) {
    return undefined;
  }
  return { key: counter, value: entry.value - 1, expires: entry.expires };
}
