/**
 * One store decision per request, shared by the checks of shared state (`idempotency`,
 * `rate_limit`, `consent_frequency`).
 *
 * At start-up each of these checks fills in its part of the operation's decision plan
 * (`BuildContext.decisions`, one per operation). At request time the first of them to run builds
 * the whole decision and asks the store once (one round trip: the X-Request-ID, every limit and
 * the consent counter together); each check then reads its own part of the answer and throws its
 * own error, so modes and findings stay per check.
 */
import { z } from "zod";
import type { GatewayContext } from "../src/core/check.ts";
import { GatewayError } from "../src/psd2/errors.ts";
import { RETRY_AFTER_SECONDS } from "../src/psd2/retry_after.ts";
import type { Services } from "../src/core/services.ts";
import {
  type Decision,
  type DecisionOutcome,
  type DecisionPlan,
  type LimitPart,
  type LimitVerdict,
  StoreUnavailableError,
  verdictProblem,
} from "../src/store/types.ts";
import { leasesOf } from "../src/store/leases.ts";
import { clientAddress } from "../src/core/request.ts";
import type { Identifiers } from "../src/psd2/identifiers.ts";

/** The decision plan of an operation's checks of shared state. */
export type SharedStatePlan = DecisionPlan<GatewayContext>;

/** What the checks of shared state keep per request. */
export interface SharedStateVariables {
  /** The request's decision, asked of the store once (see {@link decide}). */
  decision?: Promise<DecisionOutcome>;
}

declare module "../src/core/check.ts" {
  interface GatewayVariables extends SharedStateVariables {}
}

async function ask(services: Services, decision: Decision): Promise<DecisionOutcome> {
  const started = performance.now();
  try {
    const verdict = await services.store.decide(decision);
    const problem = verdictProblem(decision, verdict);
    if (problem === undefined) return { decision, verdict };
    services.store.stats.errors++;
    services.log.error({
      msg: "store verdict not understood",
      store: services.store.kind,
      problem,
    });
    return {
      decision,
      error: new StoreUnavailableError(`The store answered with an unknown verdict: ${problem}`),
    };
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    return { decision, error };
  } finally {
    services.metrics.storeSeconds.observe({}, (performance.now() - started) / 1000);
  }
}

function build(c: GatewayContext, plan: SharedStatePlan): Decision {
  return {
    idempotency: plan.idempotency?.(c),
    limits: plan.limits?.(c) ?? [],
    frequency: plan.frequency?.(c),
    owner: plan.owner?.(c),
  };
}

/**
 * A decision whose limits may be leased (`want` above 1): the limits this process holds a lease
 * of are decided here, the rest by the store, which may grant a lease. A request another part
 * refuses gives its leased requests back; a decision left with nothing for the store makes no
 * round trip.
 */
async function leased(services: Services, decision: Decision): Promise<DecisionOutcome> {
  const leases = leasesOf(services.store);
  const now = Date.now();
  const local = decision.limits.map((limit) =>
    leasing(limit) ? leases.take(limit.key, now) : undefined
  );
  // One request at a time asks for a lease of a limit; those beside it ask for themselves.
  const asking: string[] = [];
  const limits = decision.limits.flatMap((limit, i) => {
    if (local[i]) return [];
    if (!leasing(limit)) return [limit];
    if (leases.ask(limit.key, now)) {
      asking.push(limit.key);
      return [limit];
    }
    return [{ ...limit, want: 1 }];
  });
  const toStore = { ...decision, limits };
  const storeBound = toStore.idempotency || toStore.frequency || toStore.limits.length > 0;
  let outcome: DecisionOutcome;
  try {
    outcome = storeBound
      ? await ask(services, toStore)
      : { decision: toStore, verdict: { now, blocked: false, limits: [] } };
  } finally {
    for (const key of asking) leases.answered(key);
  }
  const { verdict } = outcome;
  // Stopped by the X-Request-ID (no limit looked at), refused, or no answer: nothing was used.
  const idempotency = verdict?.idempotency?.outcome;
  const stopped = idempotency === "replay" ||
    (decision.idempotency?.enforce && idempotency !== "claimed" && idempotency !== "free");
  if (!verdict || stopped || verdict.blocked) {
    for (const taken of local) if (taken) leases.giveBack(taken.lease);
    if (!verdict || stopped) return { ...outcome, decision };
    return { decision, verdict: { ...verdict, limits: merged(local, verdict.limits) } };
  }
  // What the store granted beyond this request is this gateway's to use, still to count down.
  const granted = verdict.limits.map((result, i) => {
    leases.keep(toStore.limits[i].key, result, now);
    const lease = (result.granted ?? 1) - 1;
    return lease > 0 ? { ...result, remaining: result.remaining + lease } : result;
  });
  return { decision, verdict: { ...verdict, limits: merged(local, granted) } };
}

/** The verdicts in the decision's order: the leased ones here, the store's between them. */
function merged(
  local: ({ verdict: LimitVerdict } | undefined)[],
  fromStore: LimitVerdict[],
): LimitVerdict[] {
  let next = 0;
  return local.map((taken) => taken?.verdict ?? fromStore[next++]);
}

/** Whether a limit part may be leased: it asks for more than its own request. */
function leasing(limit: LimitPart): boolean {
  return (limit.want ?? 1) > 1;
}

/** The store's answer to `decision`, with its leases where it may have any. */
function asked(services: Services, decision: Decision): Promise<DecisionOutcome> {
  return decision.limits.some(leasing) ? leased(services, decision) : ask(services, decision);
}

/** The request's decision, asked of the store once and shared by the checks. */
export function decide(
  c: GatewayContext,
  plan: SharedStatePlan,
  services: Services,
): Promise<DecisionOutcome> {
  let outcome = c.get("decision");
  if (!outcome) {
    outcome = asked(services, build(c, plan));
    c.set("decision", outcome);
  }
  return outcome;
}

/** Asks the same decision again (an in-flight duplicate polling for the first request). */
export async function decideAgain(c: GatewayContext, services: Services): Promise<DecisionOutcome> {
  const { decision } = await c.get("decision")!;
  const outcome = asked(services, decision);
  c.set("decision", outcome);
  return await outcome;
}

/** The `fail` option of the checks of shared state. */
export function failField(fallback: "open" | "closed") {
  return z.enum(["open", "closed"]).default(fallback).describe(
    "When the store is unavailable: open: forward the request, log and count it; closed: 503 STORE_UNAVAILABLE with Retry-After",
  );
}

/** Applies a check's `fail` policy to a store outage: throws when closed, logs when open. */
export function storeUnavailable(
  c: GatewayContext,
  services: Services,
  how: { check: string; fail: "open" | "closed" },
): void {
  services.metrics.storeErrors.inc({ check: how.check });
  if (how.fail === "closed") {
    throw new GatewayError(
      503,
      "STORE_UNAVAILABLE",
      "The gateway cannot check this request against its shared state now; retry later",
      { headers: { "retry-after": String(RETRY_AFTER_SECONDS.storeUnavailable) } },
    );
  }
  services.store.stats.failOpen++;
  services.log.error({
    msg: "store unavailable, request let through",
    check: how.check,
    op: c.get("op").id,
    request_id: c.get("requestId") || undefined,
  });
}

/**
 * Who is calling, for keys: the TPP id when a check established it, else the client's network
 * (`ip:<address>`, an IPv6 client by its prefix: see `identifiers.ipv6_prefix`), else `anonymous`.
 */
export function callerId(c: GatewayContext, ids: Identifiers): string {
  const tpp = c.get("tpp")?.id;
  if (tpp) return tpp;
  const address = clientAddress(c);
  return address ? `ip:${ids.client(address)}` : "anonymous";
}

/**
 * A caller id as the policy writes it (`ip:<address>` in tiers and bilateral maxima), in the form
 * {@link callerId} gives: an IPv6 address becomes its network.
 */
export function policyCallerId(id: string, ids: Identifiers): string {
  return id.startsWith("ip:") ? `ip:${ids.client(id.slice(3))}` : id;
}

/**
 * The identified TPP's part of a key (`keyPart` of its id); "" for every caller without a TPP
 * identity, which no TPP's part can be.
 */
export function tppKey(c: GatewayContext): string {
  const tpp = c.get("tpp")?.id;
  return tpp ? keyPart(tpp) : "";
}

/**
 * The hash tag that puts every key of a request's decision in one Redis Cluster slot, as the
 * start of each key: `{<TPP>}:` (`keyPart` of its id; `{-}:` for every caller without a TPP
 * identity, who share one X-Request-ID key space), when the store needs one (`Store.tagKeys`),
 * else "" (memory, one Redis, a cluster whose prefix holds a tag: keys as before).
 */
export function slotTag(c: GatewayContext, services: Services): string {
  return services.store.tagKeys ? `{${tppKey(c) || "-"}}:` : "";
}

/** A key component: never contains the `:` separator. */
export function keyPart(value: string): string {
  return encodeURIComponent(value);
}
