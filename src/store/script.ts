/**
 * The Redis side of the store: the Lua scripts that decide a request in one round trip (with
 * Redis `TIME`, so every gateway instance uses one clock), their KEYS/ARGV layout, and a
 * {@link Store} over any transport that can run them (node-redis over TCP, Upstash over HTTP).
 * Scripts go as EVALSHA, falling back to EVAL when the server answers NOSCRIPT (after a restart).
 *
 * Records: an X-Request-ID is a hash (s: inflight|done|gone|seen, f: fingerprint, t: owner
 * token, u: end of the in-flight time in milliseconds, st/h/b: the stored answer); a rate limit is a string holding its GCRA theoretical
 * arrival time in microseconds; a consent is `recurring|frequencyPerDay`; a day counter is an
 * integer.
 */
import { withDeadline } from "../lib/deadline.ts";
import type { Logger } from "../lib/log.ts";
import {
  type Completion,
  type Decision,
  type IdempotencyOutcome,
  limitPeriod,
  newStats,
  type Store,
  type StoreStats,
  StoreUnavailableError,
  type Verdict,
} from "./types.ts";

/** Decides one request; the layout of KEYS and ARGV is the one {@link encodeDecision} writes. */
export const DECIDE_SCRIPT = `
local t = redis.call("TIME")
local now_us = tonumber(t[1]) * 1000000 + tonumber(t[2])
local now = math.floor(now_us / 1000)
local ki, ai = 0, 0
local function key() ki = ki + 1 return KEYS[ki] end
local function arg() ai = ai + 1 return ARGV[ai] end
local blocked = 0
local reply = {now, 0, "none", "", "", "", 0}

local idem_mode = arg()
local idem_key, fp, token, inflight_ms, retention_ms
local outcome = "none"
if idem_mode ~= "none" then
  idem_key = key()
  fp = arg()
  token = arg()
  local enforce = arg() == "1"
  inflight_ms = arg()
  retention_ms = arg()
  local rec = redis.call("HMGET", idem_key, "s", "f", "st", "h", "b", "u")
  local s = rec[1]
  if not s then outcome = "free"
  elseif idem_mode == "unique" then outcome = "duplicate"
  elseif rec[2] ~= fp then outcome = "mismatch"
  elseif s == "inflight" and rec[6] and now >= tonumber(rec[6]) then outcome = "unknown"
  elseif s == "inflight" then outcome = "inflight"
  elseif s == "done" then outcome = "replay"
  elseif s == "gone" then outcome = "gone"
  else outcome = "duplicate" end
  reply[3] = outcome
  if outcome == "replay" then
    reply[4] = rec[3] or ""
    reply[5] = rec[4] or ""
    reply[6] = rec[5] or ""
    return reply
  end
  if outcome ~= "free" and enforce then
    reply[2] = 1
    return reply
  end
end

local n = tonumber(arg())
reply[7] = n
local limit_keys, tats, allowed = {}, {}, {}
for i = 1, n do
  local lk = key()
  local period = tonumber(arg())
  local tau = tonumber(arg())
  local enforce = arg() == "1"
  local stored = redis.call("GET", lk)
  local tat = stored and tonumber(stored) or now_us
  if tat < now_us then tat = now_us end
  local nxt = tat + period
  local allow_at = nxt - tau
  limit_keys[i] = lk
  tats[i] = nxt
  if now_us >= allow_at then
    allowed[i] = true
    table.insert(reply, 1)
    table.insert(reply, math.floor((now_us - allow_at) / period + 0.000001))
    table.insert(reply, math.ceil((nxt - now_us) / 1000))
    table.insert(reply, 0)
  else
    allowed[i] = false
    table.insert(reply, 0)
    table.insert(reply, 0)
    table.insert(reply, math.ceil((tat - now_us) / 1000))
    table.insert(reply, math.ceil((allow_at - now_us) / 1000))
    if enforce then blocked = 1 end
  end
end

local has_freq = arg()
local day_key, day_end
local counted, freq_ok, used, flimit, retry, known = 0, 1, 0, 0, 0, 0
if has_freq == "1" then
  local ck = key()
  local dkeys = {key(), key(), key()}
  local starts, ends = {}, {}
  for i = 1, 3 do
    starts[i] = tonumber(arg())
    ends[i] = tonumber(arg())
  end
  local max = tonumber(arg())
  local unknown = tonumber(arg())
  local psu = arg() == "1"
  local enforce = arg() == "1"
  local rec = redis.call("GET", ck)
  local r, f
  if rec then r, f = string.match(rec, "^([01])|(%d+)$") end
  if r then
    known = 1
    if r == "0" then
      counted = 1
      flimit = 1
    elseif not psu then
      counted = 1
      flimit = math.min(tonumber(f), max)
    end
  elseif unknown > 0 and not psu then
    counted = 1
    flimit = unknown
  end
  if counted == 1 then
    local d = 2
    for i = 1, 3 do
      if starts[i] <= now and now < ends[i] then d = i end
    end
    day_key = dkeys[d]
    day_end = ends[d]
    local seen = redis.call("GET", day_key)
    used = seen and tonumber(seen) or 0
    retry = day_end - now
    if used >= flimit then
      freq_ok = 0
      if enforce then blocked = 1 end
    end
  end
end

reply[2] = blocked
if blocked == 0 then
  for i = 1, n do
    if allowed[i] then
      redis.call("SET", limit_keys[i], string.format("%.0f", tats[i]),
        "PX", math.ceil((tats[i] - now_us) / 1000) + 1)
    end
  end
  if counted == 1 and freq_ok == 1 then
    used = redis.call("INCR", day_key)
    redis.call("PEXPIREAT", day_key, day_end + 3600000)
  end
  if outcome == "free" then
    if idem_mode == "replay" then
      redis.call("HSET", idem_key, "s", "inflight", "f", fp, "t", token,
        "u", string.format("%.0f", now + tonumber(inflight_ms)))
      redis.call("PEXPIRE", idem_key, math.max(tonumber(inflight_ms), tonumber(retention_ms)))
    else
      redis.call("HSET", idem_key, "s", "seen", "f", fp)
      redis.call("PEXPIRE", idem_key, retention_ms)
    end
    reply[3] = "claimed"
  end
end
table.insert(reply, tonumber(has_freq))
table.insert(reply, counted)
table.insert(reply, freq_ok)
table.insert(reply, flimit)
table.insert(reply, used)
table.insert(reply, retry)
table.insert(reply, known)
return reply
`;

/** Stores (done, gone) or releases an X-Request-ID record, if the token still owns it. */
export const COMPLETE_SCRIPT = `
if redis.call("HGET", KEYS[1], "t") ~= ARGV[1] then return 0 end
if ARGV[2] == "release" then
  redis.call("DEL", KEYS[1])
  return 1
end
redis.call("HSET", KEYS[1], "s", ARGV[2], "st", ARGV[4], "h", ARGV[5], "b", ARGV[6])
redis.call("PEXPIRE", KEYS[1], ARGV[3])
return 1
`;

/** What a backend must offer to run the scripts. */
export interface ScriptTransport {
  evalSha(sha: string, keys: string[], args: string[]): Promise<unknown>;
  eval(script: string, keys: string[], args: string[]): Promise<unknown>;
  set(key: string, value: string, ttlMs: number): Promise<unknown>;
  del(key: string): Promise<unknown>;
  close(): Promise<void>;
}

/** KEYS and ARGV of {@link DECIDE_SCRIPT} for a decision. */
export function encodeDecision(
  decision: Decision,
  prefix: string,
): { keys: string[]; args: string[] } {
  const keys: string[] = [];
  const args: string[] = [];
  const idem = decision.idempotency;
  if (idem) {
    keys.push(prefix + idem.key);
    args.push(
      idem.mode,
      idem.fingerprint,
      idem.token,
      idem.enforce ? "1" : "0",
      String(idem.inflightMs),
      String(idem.retentionMs),
    );
  } else {
    args.push("none");
  }
  args.push(String(decision.limits.length));
  for (const limit of decision.limits) {
    const period = limitPeriod(limit);
    keys.push(prefix + limit.key);
    args.push(String(period), String(period * limit.burst), limit.enforce ? "1" : "0");
  }
  const frequency = decision.frequency;
  if (frequency) {
    if (frequency.days.length !== 3) throw new Error("A frequency part needs three candidate days");
    keys.push(prefix + frequency.consentKey, ...frequency.days.map((d) => prefix + d.key));
    args.push("1");
    for (const day of frequency.days) args.push(String(day.start), String(day.end));
    args.push(
      String(frequency.max),
      String(frequency.unknownLimit),
      frequency.psuInitiated ? "1" : "0",
      frequency.enforce ? "1" : "0",
    );
  } else {
    args.push("0");
  }
  return { keys, args };
}

/** Reads the reply of {@link DECIDE_SCRIPT}. */
export function decodeVerdict(reply: unknown, decision: Decision): Verdict {
  if (!Array.isArray(reply) || reply.length < 7) {
    throw new StoreUnavailableError("The store answered the decision in an unexpected form");
  }
  const number = (i: number) => Number(reply[i]);
  const verdict: Verdict = { now: number(0), blocked: number(1) === 1, limits: [] };
  const outcome = String(reply[2]);
  if (decision.idempotency) {
    verdict.idempotency = { outcome: outcome as IdempotencyOutcome };
    if (outcome === "replay") {
      verdict.idempotency.response = {
        status: Number(reply[3]),
        headers: reply[4] ? JSON.parse(String(reply[4])) : [],
        body: String(reply[5]),
      };
      return verdict;
    }
  }
  if (reply.length === 7) return verdict;
  let i = 7;
  for (let n = 0; n < number(6); n++, i += 4) {
    verdict.limits.push({
      allowed: number(i) === 1,
      remaining: number(i + 1),
      resetMs: number(i + 2),
      retryMs: number(i + 3),
    });
  }
  if (number(i) === 1) {
    verdict.frequency = {
      counted: number(i + 1) === 1,
      allowed: number(i + 2) === 1,
      limit: number(i + 3),
      used: number(i + 4),
      retryMs: number(i + 5),
      known: number(i + 6) === 1,
    };
  }
  return verdict;
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
  log?: Logger;
}

/** A {@link Store} over a script transport: one script call per decision. */
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

  return {
    kind: options.kind,
    stats,
    async decide(decision) {
      const { keys, args } = encodeDecision(decision, prefix);
      let reply: unknown;
      try {
        reply = await run(DECIDE_SCRIPT, keys, args);
      } catch (error) {
        failed("decide", error);
      }
      return decodeVerdict(reply, decision);
    },
    async complete(completion: Completion) {
      const response = completion.response;
      try {
        await run(COMPLETE_SCRIPT, [prefix + completion.key], [
          completion.token,
          completion.action,
          String(completion.retentionMs),
          String(response?.status ?? 0),
          JSON.stringify(response?.headers ?? []),
          response?.body ?? "",
        ]);
      } catch (error) {
        failed("complete", error);
      }
    },
    async put(key, value, ttlMs) {
      try {
        await bounded(() => transport.set(prefix + key, value, Math.max(1, Math.ceil(ttlMs))));
      } catch (error) {
        failed("put", error);
      }
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
