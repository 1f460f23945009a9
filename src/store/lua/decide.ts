/**
 * The decision script: one request decided atomically on the store's clock (Redis `TIME`, so
 * every gateway instance counts with one clock): the X-Request-ID, every rate limit and the
 * consent counter, nothing written when an enforcing part rejects the request. Beside it, the
 * KEYS/ARGV layout it reads ({@link encodeDecision}) and the reply it writes ({@link decodeVerdict}).
 *
 * Records: an X-Request-ID is a hash (s: inflight|done|gone|seen, f: fingerprint, t: owner
 * token, u: end of the in-flight time in milliseconds, st/h/b: the stored answer; an id used in
 * unique mode holds s = seen alone, and any reuse of it is a duplicate); a rate limit
 * is a string holding its GCRA theoretical arrival time in microseconds; a consent is
 * `recurring|frequencyPerDay`; a day counter is an integer.
 */
import {
  type Decision,
  type FrequencyVerdict,
  type IdempotencyOutcome,
  limitPeriod,
  type LimitVerdict,
  StoreUnavailableError,
  type Verdict,
} from "../types.ts";

/**
 * KEYS: the X-Request-ID record (when the decision has one), each limit's key, then the consent
 * record and its three candidate day counters (when the read is to be counted), the middle day
 * first: one MGET reads the limits, the consent and that day; another day is read only when the
 * store's clock falls in it.
 *
 * The script decides a batch of decisions in turn, on one reading of the clock (each as atomic as
 * alone: no other command runs in between). ARGV[1] is their number; then each decision's
 * arguments, KEYS are the decisions' keys in turn. A decision's first three arguments say how many
 * keys and arguments it has, so that one that stops early (a replay, a duplicate) leaves the next
 * one's where they begin.
 *
 * A decision's arguments: idem_mode ("none", "replay" or "unique"), limit_count, has_frequency
 * ("0" or "1"), then
 * - the X-Request-ID: fingerprint, token, enforce, inflight_ms, expire_ms (how long a claim is
 *   kept: the retention, and in replay mode at least the in-flight time)
 * - each limit: period_us, tau_us (period times burst), enforce, want (requests asked for at once:
 *   this one and a lease; at most a quarter of what the limit allows now is granted)
 * - the consent counter: three day_start, day_end pairs, max_per_day, unknown_limit,
 *   psu_initiated, enforce
 *
 * Reply: one flat array per decision, {now_ms, blocked, outcome, ...}, followed by
 * - a replay: status, headers, body
 * - a decision the X-Request-ID stopped: nothing
 * - otherwise: allowed, remaining, reset_ms, retry_ms, granted per limit, then (with a counter)
 *   counted, allowed, limit, used, retry_ms, known, counted_day; counted_day is the index (1 to 3)
 *   of the day counter the read was counted in, 0 when it was not
 *
 * What a decision costs Redis is mostly the script's own work, not its commands (callgrind,
 * `deno run -A bench/redis_instructions.ts`): numbers are handed to commands as integer strings
 * (a Lua number becomes "%.17g" text, and `%.0f` formats through multi-precision code), the
 * candidate day most likely to hold the store's clock is tried (and read) first, the keys a
 * decision reads come in one MGET, and a day counter's expiry is set when the counter is made.
 */
export const DECIDE_SCRIPT = `
local time = redis.call("TIME")
local now_us = tonumber(time[1]) * 1000000 + tonumber(time[2])
local now = math.floor(now_us / 1000)
local call, format, ceil = redis.call, string.format, math.ceil
-- Where each candidate day's counter is among a decision's keys: the middle day first.
local day_slot = {2, 1, 3}

-- The last key and argument read.
local k, a = 0, 1

local function decide(idem_mode, limit_count, has_frequency)
  local blocked = 0

  -- The X-Request-ID: its earlier use, if any.
  local outcome = "none"
  local idem_key, fingerprint, token, inflight_ms, expire_ms
  if idem_mode ~= "none" then
    k = k + 1
    idem_key = KEYS[k]
    fingerprint, token = ARGV[a + 1], ARGV[a + 2]
    local idem_enforce = ARGV[a + 3] == "1"
    inflight_ms, expire_ms = ARGV[a + 4], ARGV[a + 5]
    a = a + 5
    if idem_mode == "unique" then
      if call("HGET", idem_key, "s") then outcome = "duplicate" else outcome = "free" end
    else
      local state, seen_fingerprint, inflight_until, status, headers, body =
        unpack(call("HMGET", idem_key, "s", "f", "u", "st", "h", "b"))
      if not state then outcome = "free"
      elseif state == "seen" then outcome = "duplicate"
      elseif seen_fingerprint ~= fingerprint then outcome = "mismatch"
      elseif state == "inflight" and inflight_until and now >= tonumber(inflight_until) then
        outcome = "unknown"
      elseif state == "inflight" then outcome = "inflight"
      elseif state == "done" then outcome = "replay"
      elseif state == "gone" then outcome = "gone"
      else outcome = "duplicate" end
      if outcome == "replay" then
        return {now, 0, outcome, status or "", headers or "", body or ""}
      end
    end
    if outcome ~= "free" and idem_enforce then return {now, 1, outcome} end
  end

  local reply = {now, 0, outcome}
  local n = 3

  -- Every record the decision reads, in one command: the limits, the consent and its middle day's
  -- counter (the other days only when the store's clock falls in them).
  local read_count = limit_count + (has_frequency and 2 or 0)
  local values = {}
  if read_count > 0 then values = call("MGET", unpack(KEYS, k + 1, k + read_count)) end

  -- The rate limits (GCRA): each allowed or not, none written yet.
  local limit_tats = {}
  for i = 1, limit_count do
    local period, tau = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
    local limit_enforce, want = ARGV[a + 3] == "1", tonumber(ARGV[a + 4])
    a = a + 4
    local stored = values[i]
    local tat = stored and tonumber(stored) or now_us
    if tat < now_us then tat = now_us end
    local allow_at = tat + period - tau
    if now_us >= allow_at then
      -- Requests allowed now, this one included; a lease takes at most a quarter of them.
      local allowed = math.floor((now_us - allow_at) / period + 0.000001) + 1
      local granted = 1
      if want > 1 then granted = math.max(1, math.min(want, math.floor(allowed / 4))) end
      local next_tat = tat + granted * period
      limit_tats[i] = next_tat
      reply[n + 1] = 1
      reply[n + 2] = allowed - granted
      reply[n + 3] = ceil((next_tat - now_us) / 1000)
      reply[n + 4] = 0
      reply[n + 5] = granted
    else
      reply[n + 1] = 0
      reply[n + 2] = 0
      reply[n + 3] = ceil((tat - now_us) / 1000)
      reply[n + 4] = ceil((allow_at - now_us) / 1000)
      reply[n + 5] = 0
      if limit_enforce then blocked = 1 end
    end
    n = n + 5
  end

  -- The consent counter: the day the store's clock falls in, among three candidates.
  local counted, read_allowed, read_limit, used, retry_ms, known = 0, 1, 0, 0, 0, 0
  local today, day_end
  if has_frequency then
    local psu_initiated = ARGV[a + 9] == "1"
    local frequency_enforce = ARGV[a + 10] == "1"
    local terms = values[limit_count + 1]
    local recurring, per_day
    if terms then recurring, per_day = string.match(terms, "^([01])|(%d+)$") end
    if recurring then
      known = 1
      if recurring == "0" then
        counted, read_limit = 1, 1
      elseif not psu_initiated then
        counted, read_limit = 1, math.min(tonumber(per_day), tonumber(ARGV[a + 7]))
      end
    elseif not psu_initiated then
      local unknown_limit = tonumber(ARGV[a + 8])
      if unknown_limit > 0 then counted, read_limit = 1, unknown_limit end
    end
    if counted == 1 then
      -- The middle day is the gateway's own; the others only when the clocks straddle midnight.
      today = 2
      if not (tonumber(ARGV[a + 3]) <= now and now < tonumber(ARGV[a + 4])) then
        for d = 1, 3, 2 do
          if tonumber(ARGV[a + 2 * d - 1]) <= now and now < tonumber(ARGV[a + 2 * d]) then
            today = d
          end
        end
      end
      day_end = tonumber(ARGV[a + 2 * today])
      if today == 2 then
        used = values[limit_count + 2]
      else
        used = call("GET", KEYS[k + limit_count + 1 + day_slot[today]])
      end
      used = tonumber(used or "0")
      retry_ms = day_end - now
      if used >= read_limit then
        read_allowed = 0
        if frequency_enforce then blocked = 1 end
      end
    end
    a = a + 10
  end

  -- Nothing is written for a rejected request.
  local counted_day = 0
  if blocked == 0 then
    for i = 1, limit_count do
      local tat = limit_tats[i]
      if tat then
        call("SET", KEYS[k + i], format("%d", tat), "PX", format("%d", ceil((tat - now_us) / 1000) + 1))
      end
    end
    if counted == 1 and read_allowed == 1 then
      local day_key = KEYS[k + limit_count + 1 + day_slot[today]]
      used = call("INCR", day_key)
      if used == 1 then call("PEXPIREAT", day_key, format("%d", day_end + 3600000)) end
      counted_day = today
    end
    if outcome == "free" then
      if idem_mode == "replay" then
        call("HSET", idem_key, "s", "inflight", "f", fingerprint, "t", token,
          "u", format("%d", now + tonumber(inflight_ms)))
      else
        call("HSET", idem_key, "s", "seen")
      end
      call("PEXPIRE", idem_key, expire_ms)
      reply[3] = "claimed"
    end
  end
  reply[2] = blocked

  if has_frequency then
    reply[n + 1] = counted
    reply[n + 2] = read_allowed
    reply[n + 3] = read_limit
    reply[n + 4] = used
    reply[n + 5] = retry_ms
    reply[n + 6] = known
    reply[n + 7] = counted_day
  end
  return reply
end

local replies = {}
for d = 1, tonumber(ARGV[1]) do
  local idem_mode, limit_count, has_frequency = ARGV[a + 1], tonumber(ARGV[a + 2]), ARGV[a + 3] == "1"
  a = a + 3
  local idem = idem_mode ~= "none"
  local key_end = k + (idem and 1 or 0) + limit_count + (has_frequency and 4 or 0)
  local arg_end = a + (idem and 5 or 0) + 4 * limit_count + (has_frequency and 10 or 0)
  replies[d] = decide(idem_mode, limit_count, has_frequency)
  k, a = key_end, arg_end
end
return replies
`;

/** KEYS and ARGV of {@link DECIDE_SCRIPT} for a batch of decisions, every key under `prefix`. */
export function encodeDecisions(
  decisions: readonly Decision[],
  prefix: string,
): { keys: string[]; args: string[] } {
  const keys: string[] = [];
  const args = [String(decisions.length)];
  for (const decision of decisions) encodeInto(decision, prefix, keys, args);
  return { keys, args };
}

/** The keys and arguments of one decision, every key under `prefix`. */
export function encodeDecision(
  decision: Decision,
  prefix: string,
): { keys: string[]; args: string[] } {
  const keys: string[] = [];
  const args: string[] = [];
  encodeInto(decision, prefix, keys, args);
  return { keys, args };
}

function encodeInto(decision: Decision, prefix: string, keys: string[], args: string[]): void {
  const { idempotency, limits, frequency } = decision;
  if (frequency && frequency.days.length !== 3) {
    throw new Error("A frequency part needs three candidate days");
  }
  args.push(idempotency?.mode ?? "none", String(limits.length), frequency ? "1" : "0");
  if (idempotency) {
    const { inflightMs, retentionMs } = idempotency;
    keys.push(prefix + idempotency.key);
    args.push(
      idempotency.fingerprint,
      idempotency.token,
      idempotency.enforce ? "1" : "0",
      String(inflightMs),
      String(idempotency.mode === "replay" ? Math.max(inflightMs, retentionMs) : retentionMs),
    );
  }
  for (const limit of limits) {
    const period = limitPeriod(limit);
    keys.push(prefix + limit.key);
    args.push(
      String(period),
      String(period * limit.burst),
      limit.enforce ? "1" : "0",
      String(limit.want ?? 1),
    );
  }
  if (frequency) {
    const [first, middle, last] = frequency.days;
    keys.push(
      prefix + frequency.consentKey,
      prefix + middle.key,
      prefix + first.key,
      prefix + last.key,
    );
    for (const day of frequency.days) args.push(String(day.start), String(day.end));
    args.push(
      String(frequency.max),
      String(frequency.unknownLimit),
      frequency.psuInitiated ? "1" : "0",
      frequency.enforce ? "1" : "0",
    );
  }
}

function unexpected(): StoreUnavailableError {
  return new StoreUnavailableError("The store answered the decision in an unexpected form");
}

/** The replies of {@link DECIDE_SCRIPT} to a batch of `count` decisions, one each. */
export function batchReplies(reply: unknown, count: number): unknown[] {
  if (!Array.isArray(reply) || reply.length !== count) throw unexpected();
  return reply;
}

/** Reads the reply of {@link DECIDE_SCRIPT} to one `decision`. */
export function decodeVerdict(reply: unknown, decision: Decision): Verdict {
  if (!Array.isArray(reply) || reply.length < 3) throw unexpected();
  const [now, blocked, outcome] = reply;
  const verdict: Verdict = { now: Number(now), blocked: Number(blocked) === 1, limits: [] };
  if (decision.idempotency) {
    verdict.idempotency = { outcome: String(outcome) as IdempotencyOutcome };
    if (outcome === "replay") {
      if (reply.length !== 6) throw unexpected();
      const [status, headers, body] = reply.slice(3).map(String);
      let pairs: [string, string][];
      try {
        pairs = headers ? JSON.parse(headers) : [];
      } catch {
        throw unexpected();
      }
      verdict.idempotency.response = { status: Number(status), headers: pairs, body };
      return verdict;
    }
  }
  // A decision its X-Request-ID stopped has no more; any other has every part it asked for.
  if (reply.length === 3 && verdict.blocked && decision.idempotency) return verdict;
  const { limits, frequency } = decision;
  if (reply.length !== 3 + 5 * limits.length + (frequency ? 7 : 0)) throw unexpected();
  const numbers = reply.map(Number);
  for (let at = 3; at < 3 + 5 * limits.length; at += 5) {
    const [allowed, remaining, resetMs, retryMs, granted] = numbers.slice(at, at + 5);
    const result: LimitVerdict = { allowed: allowed === 1, remaining, resetMs, retryMs };
    if (granted > 1) result.granted = granted;
    verdict.limits.push(result);
  }
  if (frequency) {
    const at = 3 + 5 * limits.length;
    const [counted, allowed, limit, used, retryMs, known, countedDay] = numbers.slice(at, at + 7);
    const result: FrequencyVerdict = {
      counted: counted === 1,
      allowed: allowed === 1,
      limit,
      used,
      retryMs,
      known: known === 1,
    };
    if (countedDay > 0) {
      const day = frequency.days[countedDay - 1];
      if (!day) throw unexpected();
      result.counter = day.key;
    }
    verdict.frequency = result;
  }
  return verdict;
}
