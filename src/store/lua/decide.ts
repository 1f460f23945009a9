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
 * record and its three candidate day counters (when the read is to be counted).
 *
 * The script decides a batch of decisions in turn, on one reading of the clock (each as atomic as
 * alone: no other command runs in between). ARGV[1] is their number; then, per decision, the
 * count of its keys and of its arguments, and its arguments. KEYS are the decisions' keys in turn.
 *
 * A decision's arguments: idem_mode ("none", "replay" or "unique"), limit_count, has_frequency
 * ("0" or "1"), then
 * - the X-Request-ID: fingerprint, token, enforce, inflight_ms, retention_ms
 * - each limit: period_us, tau_us (period times burst), enforce
 * - the consent counter: three day_start, day_end pairs, max_per_day, unknown_limit,
 *   psu_initiated, enforce
 *
 * Reply: one {now_ms, blocked, idempotency, limits, frequency} per decision, with
 * - idempotency: {outcome, status, headers, body} (the last three only for a replay)
 * - limits: one {allowed, remaining, reset_ms, retry_ms} per limit (none once the X-Request-ID
 *   stopped the decision)
 * - frequency: {counted, allowed, limit, used, retry_ms, known, counted_day}, or {} without a
 *   counter; counted_day is the index (1 to 3) of the day counter the read was counted in, 0 when
 *   it was not
 */
export const DECIDE_SCRIPT = `
local time = redis.call("TIME")
local now_us = tonumber(time[1]) * 1000000 + tonumber(time[2])
local now = math.floor(now_us / 1000)

local key_index, arg_index = 0, 1
local function next_key() key_index = key_index + 1 return KEYS[key_index] end
local function next_arg() arg_index = arg_index + 1 return ARGV[arg_index] end

local function decide()
  local idem_mode = next_arg()
  local limit_count = tonumber(next_arg())
  local has_frequency = next_arg() == "1"
  local blocked = 0

  -- The X-Request-ID: its earlier use, if any.
  local outcome = "none"
  local idem_key, fingerprint, token, inflight_ms, retention_ms
  if idem_mode ~= "none" then
    idem_key = next_key()
    fingerprint = next_arg()
    token = next_arg()
    local idem_enforce = next_arg() == "1"
    inflight_ms = tonumber(next_arg())
    retention_ms = tonumber(next_arg())
    local state, seen_fingerprint, inflight_until, status, headers, body =
      unpack(redis.call("HMGET", idem_key, "s", "f", "u", "st", "h", "b"))
    if not state then outcome = "free"
    elseif idem_mode == "unique" or state == "seen" then outcome = "duplicate"
    elseif seen_fingerprint ~= fingerprint then outcome = "mismatch"
    elseif state == "inflight" and inflight_until and now >= tonumber(inflight_until) then
      outcome = "unknown"
    elseif state == "inflight" then outcome = "inflight"
    elseif state == "done" then outcome = "replay"
    elseif state == "gone" then outcome = "gone"
    else outcome = "duplicate" end
    if outcome == "replay" then
      return {now, 0, {outcome, status or "", headers or "", body or ""}, {}, {}}
    end
    if outcome ~= "free" and idem_enforce then
      return {now, 1, {outcome, "", "", ""}, {}, {}}
    end
  end

  -- The rate limits (GCRA): each allowed or not, none written yet.
  local limit_keys, limit_tats, limit_allowed, limits = {}, {}, {}, {}
  for i = 1, limit_count do
    local limit_key = next_key()
    local period = tonumber(next_arg())
    local tau = tonumber(next_arg())
    local limit_enforce = next_arg() == "1"
    local stored = redis.call("GET", limit_key)
    local tat = stored and tonumber(stored) or now_us
    if tat < now_us then tat = now_us end
    local next_tat = tat + period
    local allow_at = next_tat - tau
    limit_keys[i] = limit_key
    limit_tats[i] = next_tat
    limit_allowed[i] = now_us >= allow_at
    if limit_allowed[i] then
      local remaining = math.floor((now_us - allow_at) / period + 0.000001)
      limits[i] = {1, remaining, math.ceil((next_tat - now_us) / 1000), 0}
    else
      limits[i] = {0, 0, math.ceil((tat - now_us) / 1000), math.ceil((allow_at - now_us) / 1000)}
      if limit_enforce then blocked = 1 end
    end
  end

  -- The consent counter: the day the store's clock falls in, among three candidates.
  local counted, read_allowed, read_limit, used, retry_ms, known = 0, 1, 0, 0, 0, 0
  local day_key, day_end, today
  local counted_day = 0
  if has_frequency then
    local consent_key = next_key()
    local day_keys = {next_key(), next_key(), next_key()}
    local day_starts, day_ends = {}, {}
    for d = 1, 3 do
      day_starts[d] = tonumber(next_arg())
      day_ends[d] = tonumber(next_arg())
    end
    local max_per_day = tonumber(next_arg())
    local unknown_limit = tonumber(next_arg())
    local psu_initiated = next_arg() == "1"
    local frequency_enforce = next_arg() == "1"
    local terms = redis.call("GET", consent_key)
    local recurring, per_day
    if terms then recurring, per_day = string.match(terms, "^([01])|(%d+)$") end
    if recurring then
      known = 1
      if recurring == "0" then
        counted, read_limit = 1, 1
      elseif not psu_initiated then
        counted, read_limit = 1, math.min(tonumber(per_day), max_per_day)
      end
    elseif unknown_limit > 0 and not psu_initiated then
      counted, read_limit = 1, unknown_limit
    end
    if counted == 1 then
      today = 2
      for d = 1, 3 do
        if day_starts[d] <= now and now < day_ends[d] then today = d end
      end
      day_key, day_end = day_keys[today], day_ends[today]
      used = tonumber(redis.call("GET", day_key) or "0")
      retry_ms = day_end - now
      if used >= read_limit then
        read_allowed = 0
        if frequency_enforce then blocked = 1 end
      end
    end
  end

  -- Nothing is written for a rejected request.
  if blocked == 0 then
    for i = 1, limit_count do
      if limit_allowed[i] then
        redis.call("SET", limit_keys[i], string.format("%.0f", limit_tats[i]),
          "PX", math.ceil((limit_tats[i] - now_us) / 1000) + 1)
      end
    end
    if counted == 1 and read_allowed == 1 then
      used = redis.call("INCR", day_key)
      redis.call("PEXPIREAT", day_key, day_end + 3600000)
      counted_day = today
    end
    if outcome == "free" then
      if idem_mode == "replay" then
        redis.call("HSET", idem_key, "s", "inflight", "f", fingerprint, "t", token,
          "u", string.format("%.0f", now + inflight_ms))
        redis.call("PEXPIRE", idem_key, math.max(inflight_ms, retention_ms))
      else
        redis.call("HSET", idem_key, "s", "seen")
        redis.call("PEXPIRE", idem_key, retention_ms)
      end
      outcome = "claimed"
    end
  end

  local frequency = {}
  if has_frequency then
    frequency = {counted, read_allowed, read_limit, used, retry_ms, known, counted_day}
  end
  return {now, blocked, {outcome, "", "", ""}, limits, frequency}
end

-- Each decision in turn: its key and argument counts first, so that one that stops early
-- (a replay, a duplicate) leaves the next one's keys and arguments where they begin.
local replies = {}
for d = 1, tonumber(ARGV[1]) do
  local key_count, arg_count = tonumber(next_arg()), tonumber(next_arg())
  local key_end, arg_end = key_index + key_count, arg_index + arg_count
  replies[d] = decide()
  key_index, arg_index = key_end, arg_end
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
  for (const decision of decisions) {
    const one = encodeDecision(decision, prefix);
    keys.push(...one.keys);
    args.push(String(one.keys.length), String(one.args.length), ...one.args);
  }
  return { keys, args };
}

/** The keys and arguments of one decision, every key under `prefix`. */
export function encodeDecision(
  decision: Decision,
  prefix: string,
): { keys: string[]; args: string[] } {
  const { idempotency, limits, frequency } = decision;
  const keys: string[] = [];
  const args = [
    idempotency?.mode ?? "none",
    String(limits.length),
    frequency ? "1" : "0",
  ];
  if (idempotency) {
    keys.push(prefix + idempotency.key);
    args.push(
      idempotency.fingerprint,
      idempotency.token,
      idempotency.enforce ? "1" : "0",
      String(idempotency.inflightMs),
      String(idempotency.retentionMs),
    );
  }
  for (const limit of limits) {
    const period = limitPeriod(limit);
    keys.push(prefix + limit.key);
    args.push(String(period), String(period * limit.burst), limit.enforce ? "1" : "0");
  }
  if (frequency) {
    if (frequency.days.length !== 3) throw new Error("A frequency part needs three candidate days");
    keys.push(prefix + frequency.consentKey, ...frequency.days.map((d) => prefix + d.key));
    for (const day of frequency.days) args.push(String(day.start), String(day.end));
    args.push(
      String(frequency.max),
      String(frequency.unknownLimit),
      frequency.psuInitiated ? "1" : "0",
      frequency.enforce ? "1" : "0",
    );
  }
  return { keys, args };
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
  if (!Array.isArray(reply) || reply.length !== 5) throw unexpected();
  const [now, blocked, idempotency, limits, frequency] = reply;
  if (!Array.isArray(idempotency) || !Array.isArray(limits) || !Array.isArray(frequency)) {
    throw unexpected();
  }
  const verdict: Verdict = { now: Number(now), blocked: Number(blocked) === 1, limits: [] };
  if (decision.idempotency) {
    const [outcome, status, headers, body] = idempotency.map(String);
    verdict.idempotency = { outcome: outcome as IdempotencyOutcome };
    if (outcome === "replay") {
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
  for (const limit of limits) {
    if (!Array.isArray(limit)) throw unexpected();
    const [allowed, remaining, resetMs, retryMs] = limit.map(Number);
    const result: LimitVerdict = { allowed: allowed === 1, remaining, resetMs, retryMs };
    verdict.limits.push(result);
  }
  if (frequency.length > 0) {
    const [counted, allowed, limit, used, retryMs, known, countedDay] = frequency.map(Number);
    const result: FrequencyVerdict = {
      counted: counted === 1,
      allowed: allowed === 1,
      limit,
      used,
      retryMs,
      known: known === 1,
    };
    if (countedDay > 0) {
      const day = decision.frequency?.days[countedDay - 1];
      if (!day) throw unexpected();
      result.counter = day.key;
    }
    verdict.frequency = result;
  }
  return verdict;
}
