/**
 * `rate_limit`: named request limits (GCRA across gateway instances: atomic store decisions on
 * the store's clock; a shared store may grant an instance a lease of the requests that follow,
 * src/store/leases.ts, never more than the limit allows). Each limit counts by a key (TPP, PSU,
 * client address, consent, operation, or a combination; the PSU is PSU-ID, else the bearer
 * token's subject, else one unknown PSU per TPP); limits with the same name share one counter
 * across every operation that has them. Over a limit: 429 ACCESS_EXCEEDED with Retry-After and
 * RateLimit-Limit, -Remaining, -Reset; forwarded requests carry the RateLimit headers too.
 * Rejected requests (by this or any other check) consume nothing. TPPs may be put in tiers that
 * override limits.
 */
import { z } from "zod";
import type { Next } from "hono";
import { header } from "../src/core/request.ts";
import { type Answer, changed } from "../src/core/answer.ts";
import { type BuildContext, defineCheck, type GatewayContext, modal } from "../src/core/check.ts";
import { GatewayError } from "../src/psd2/errors.ts";
import type { Services } from "../src/core/services.ts";
import type { CounterCell } from "../src/lib/metrics.ts";
import { type Identifiers, identifiers } from "../src/psd2/identifiers.ts";
import {
  callerId,
  decide,
  failField,
  keyPart,
  policyCallerId,
  type SharedStatePlan,
  slotTag,
  storeUnavailable,
} from "./_shared_state.ts";
import { duration, headerName } from "../src/lib/fields.ts";
import { retryAfter } from "../src/psd2/retry_after.ts";
import type { LimitPart, LimitVerdict } from "../src/store/types.ts";
import { LEASE_MS } from "../src/store/leases.ts";
import { clientAddress } from "../src/core/request.ts";
import type {} from "./bearer_token.ts"; // tokenSubject

const KEY = "rate_limit";

/** What a limit may count by. */
export const LIMIT_KEYS = ["tpp", "psu_id", "client_ip", "consent", "operation"] as const;
type LimitKey = typeof LIMIT_KEYS[number];

const name = z.string().regex(/^[a-z][a-z0-9_]*$/, "a name in snake_case");

const limitSchema = z.object({
  key: z.array(z.enum(LIMIT_KEYS)).min(1).default(["tpp"]).describe(
    "What the limit counts by: tpp, psu_id (PSU-ID, else the bearer token's subject, else one unknown PSU per TPP), client_ip, consent, operation, or several; a request without one of them is not counted by this limit",
  ),
  limit: z.number().int().positive().describe("Requests allowed per window"),
  window: duration().describe("The window, for example 1s, 1m, 1h, 1d"),
  burst: z.number().int().positive().optional().describe(
    "Requests allowed at once (default: limit); the quota refills steadily at limit per window",
  ),
}).strict();

const overrideSchema = z.object({
  limit: z.number().int().positive().optional().describe("Requests allowed per window"),
  window: duration().optional().describe("The window"),
  burst: z.number().int().positive().optional().describe("Requests allowed at once"),
}).strict();

/** A named limit with a tier's overrides applied. */
interface CompiledLimit {
  readonly name: string;
  readonly key: readonly LimitKey[];
  readonly limit: number;
  readonly windowMs: number;
  readonly burst: number;
  /** Requests one store decision may take for this gateway at once (see {@link leaseOf}). */
  readonly want: number;
}

/** The options compiled once for one operation; every request of it reads this. */
interface RateLimitConfig {
  readonly operationId: string;
  readonly enforce: boolean;
  readonly fail: "open" | "closed";
  readonly ipHeader?: string;
  /** The limits of callers in no tier. */
  readonly standard: readonly CompiledLimit[];
  /** The limits of each caller put in a tier. */
  readonly byTpp: ReadonlyMap<string, readonly CompiledLimit[]>;
  readonly services: Services;
  /** The canonical form of ids and client addresses (the policy's `identifiers`). */
  readonly ids: Identifiers;
  readonly allowed: CounterCell;
  readonly rejected: CounterCell;
}

type Options = z.output<typeof rateLimit.options>;
type Override = z.output<typeof overrideSchema>;

/** `60000` to `1m`, for error texts. */
function windowText(ms: number): string {
  for (const [unit, size] of [["d", 86_400_000], ["h", 3_600_000], ["m", 60_000], ["s", 1000]]) {
    if (ms % (size as number) === 0) return `${ms / (size as number)}${unit}`;
  }
  return `${ms}ms`;
}

/**
 * Requests a store decision may take at once for a limit: at most `lease`, and no more than the
 * limit refills in the lease's lifetime, so that a lease left unused costs the TPP no more than a
 * second of its quota. The memory store is in the process already: it decides every request.
 */
function leaseOf(lease: number, limit: number, windowMs: number, store: Services["store"]) {
  if (store.kind === "memory") return 1;
  return Math.max(1, Math.min(lease, Math.floor(limit * LEASE_MS / windowMs)));
}

/** The named limits with one tier's overrides applied. */
function applyTier(
  limits: [string, z.output<typeof limitSchema>][],
  { tier, lease }: {
    tier: Record<string, Override>;
    lease: (limit: number, windowMs: number) => number;
  },
): readonly CompiledLimit[] {
  return Object.freeze(limits.map(([limitName, limit]) => {
    const override = tier[limitName] ?? {};
    const count = override.limit ?? limit.limit;
    const windowMs = override.window ?? limit.window;
    return Object.freeze({
      name: limitName,
      key: limit.key,
      limit: count,
      windowMs,
      burst: override.burst ?? (override.limit ? count : limit.burst ?? count),
      want: lease(count, windowMs),
    });
  }));
}

/** The options for one operation, or `undefined` when no limit is set. */
function compile(options: Options, { operation, services, sections }: BuildContext) {
  const base = Object.entries(options.limits);
  if (base.length === 0) return undefined;
  // On a Redis Cluster a decision's keys share the caller's slot: a limit shared by TPPs has none.
  const shared = base.find(([, limit]) => !limit.key.includes("tpp"));
  if (shared && services.store.tagKeys) {
    throw new Error(
      `rate_limit.limits.${shared[0]}: key [${
        shared[1].key.join(", ")
      }] does not count by tpp, which a Redis Cluster store needs (one decision's keys share the caller's slot): add tpp to the key, or put a hash tag in store.prefix ("{xs2a}:") to keep every key in one slot`,
    );
  }
  const lease = (limit: number, windowMs: number) =>
    leaseOf(options.lease, limit, windowMs, services.store);
  const tiers = new Map(
    Object.entries(options.tiers).map((
      [tier, overrides],
    ) => [tier, applyTier(base, { tier: overrides, lease })]),
  );
  const ids = identifiers(sections.identifiers);
  const config: RateLimitConfig = {
    operationId: operation.id,
    enforce: options.mode === "enforce",
    fail: options.fail,
    ipHeader: options.client_ip_header,
    standard: applyTier(base, { tier: {}, lease }),
    byTpp: new Map(
      Object.entries(options.tpps).map((
        [tpp, tier],
      ) => [policyCallerId(tpp, ids), tiers.get(tier)!]),
    ),
    services,
    ids,
    allowed: services.metrics.rateLimit.cell({ outcome: "allowed" }),
    rejected: services.metrics.rateLimit.cell({ outcome: "rejected" }),
  };
  return Object.freeze(config);
}

/**
 * The PSU a request counts for: PSU-ID, else the bearer token's subject (either in its canonical
 * form, so that a PSU-ID's case never escapes a per-PSU limit), else one "unknown PSU" of the
 * caller, so that leaving PSU-ID out never escapes it either. No PSU-ID can name that one:
 * header values never start with a space.
 */
function psuComponent(c: GatewayContext, ids: Identifiers): string {
  const psu = header(c, "psu-id") || c.get("tokenSubject");
  return psu ? ids.id("psu_id", psu) : ` unknown PSU of ${callerId(c, ids)}`;
}

/** What a request counts by for one key of a limit; `undefined`: not counted by that limit. */
function component(c: GatewayContext, key: LimitKey, config: RateLimitConfig): string | undefined {
  const { ids, ipHeader } = config;
  switch (key) {
    case "tpp":
      return callerId(c, ids);
    case "psu_id":
      return psuComponent(c, ids);
    case "client_ip": {
      const address = clientAddress(c, ipHeader);
      return address === undefined ? undefined : ids.client(address);
    }
    case "consent": {
      const consent = header(c, "consent-id") ?? c.get("params").consentId;
      return consent === undefined ? undefined : ids.id("consent_id", consent);
    }
    case "operation":
      return config.operationId;
  }
}

/** The limits part of the request's store decision. */
function limitParts(c: GatewayContext, config: RateLimitConfig): LimitPart[] {
  const limits = config.byTpp.get(callerId(c, config.ids)) ?? config.standard;
  const parts: LimitPart[] = [];
  const tag = slotTag(c, config.services);
  for (const limit of limits) {
    const values = limit.key.map((k) => component(c, k, config));
    if (values.some((v) => v === undefined)) continue;
    parts.push({
      name: limit.name,
      key: `${tag}rl:${limit.name}:${values.map((v) => keyPart(v!)).join(":")}`,
      limit: limit.limit,
      windowMs: limit.windowMs,
      burst: limit.burst,
      enforce: config.enforce,
      want: limit.want,
    });
  }
  return parts;
}

/** 429 ACCESS_EXCEEDED for the limit that rejected the request. */
function exceeded(limit: LimitPart, result: LimitVerdict): GatewayError {
  const retry = retryAfter(result.retryMs);
  return new GatewayError(
    429,
    "ACCESS_EXCEEDED",
    `Too many requests: limit "${limit.name}" allows ${limit.limit} per ${
      windowText(limit.windowMs)
    }; retry in ${retry} s`,
    {
      headers: {
        "retry-after": retry,
        "ratelimit-limit": String(limit.limit),
        "ratelimit-remaining": "0",
        "ratelimit-reset": retryAfter(result.resetMs),
      },
    },
  );
}

/**
 * Reads the limits' part of the store's answer: 429 for the limit that rejected the request
 * (the longest wait); the answer step shows the tightest limit.
 */
async function enforceLimits(
  c: GatewayContext,
  next: Next,
  config: RateLimitConfig,
  plan: SharedStatePlan,
): Promise<void> {
  const outcome = await decide(c, plan, config.services);
  if (outcome.error) {
    storeUnavailable(c, config.services, { check: KEY, fail: config.fail });
    return next();
  }
  const { verdict, decision } = outcome;
  if (verdict.limits.length === 0) return next();
  let rejected = -1;
  verdict.limits.forEach((result, i) => {
    if (!result.allowed && (rejected < 0 || result.retryMs > verdict.limits[rejected].retryMs)) {
      rejected = i;
    }
  });
  (rejected >= 0 ? config.rejected : config.allowed).value++;
  if (rejected >= 0) throw exceeded(decision.limits[rejected], verdict.limits[rejected]);
  return next();
}

/** The RateLimit headers, on the way out. */
const SHOWN = new Set(["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"]);

/**
 * The answer step: every answer to a request the limits counted (the core's, a replay, a local
 * error after the count) shows the tightest limit in its RateLimit headers, replacing any of the
 * core's; a refused request shows none (the 429 of a limit carries its own).
 */
async function showLimits(c: GatewayContext, answer: Answer): Promise<Answer | undefined> {
  const asked = c.get("decision");
  if (!asked) return undefined;
  const { verdict, decision, error } = await asked;
  if (error || verdict.blocked || verdict.limits.length === 0) return undefined;
  let tightest = 0;
  verdict.limits.forEach((result, i) => {
    if (result.remaining < verdict.limits[tightest].remaining) tightest = i;
  });
  const result = verdict.limits[tightest];
  return changed(answer, {
    headers: [
      ...answer.headers.filter((entry) => !SHOWN.has(entry[0])),
      ["ratelimit-limit", String(decision.limits[tightest].limit)],
      ["ratelimit-remaining", String(result.remaining)],
      ["ratelimit-reset", String(Math.ceil(result.resetMs / 1000))],
    ],
  });
}

export const rateLimit = defineCheck({
  key: KEY,
  description: "Named request limits per TPP, PSU, client address, consent or operation (429)",
  options: modal({
    fail: failField("open"),
    limits: z.record(name, limitSchema).default({}).describe(
      "Named limits; a level that sets limits replaces the limits of the level below",
    ),
    tiers: z.record(name, z.record(name, overrideSchema)).default({}).describe(
      "Tiers: per tier, overrides of named limits (limit, window, burst)",
    ),
    tpps: z.record(z.string().min(1), name).default({}).describe(
      "The tier of each caller: by TPP id (PSDGE-NBG-123456: gold), or ip:<address> for callers without a TPP identity",
    ),
    lease: z.number().int().min(1).max(64).default(16).describe(
      "Requests one store decision may take for this gateway instance at once, used by the requests that follow on the same limit within 1 s: at most what the limit refills in 1 s and a quarter of what it allows at the time; 1: every request asks the store (the memory store always does). The limit holds across instances either way; a lease left unused is quota lost until it refills",
    ),
    client_ip_header: headerName().optional().describe(
      "Header in which the TLS terminator passes the client address instead of X-Forwarded-For (its last value counts; believed only from trust.terminators); default: X-Forwarded-For's rightmost address that is not a terminator",
    ),
  }),
  validate(options) {
    return Object.entries(options.tpps)
      .filter(([, tier]) => !(tier in options.tiers))
      .map(([tpp, tier]) => `tpps.${tpp}: tier "${tier}" is not defined in tiers`);
  },
  create(options, context) {
    const config = compile(options, context);
    if (!config) return undefined;
    const plan = context.decisions;
    plan.limits = (c) => limitParts(c, config);
    plan.owner ??= (c) => callerId(c, config.ids);
    return {
      request: (c, next) => enforceLimits(c, next, config, plan),
      answer: showLimits,
    };
  },
});
