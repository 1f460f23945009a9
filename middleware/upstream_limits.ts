/**
 * `upstream_limits`: how many requests this gateway instance has at the core at once
 * (`max_in_flight`), how many more may wait for a slot (`max_queue`) and for how long
 * (`queue_timeout`). A request that finds the queue full or waits too long is shed with 503
 * UPSTREAM_UNAVAILABLE and Retry-After, before it reaches the core. Writes may have a pool of
 * their own (`writes`), so that a storm of reads never starves payments.
 *
 * Operations whose pool has the same name and limits share its slots: limits set in `defaults`
 * make one pool for every operation, a group or an operation that sets other limits (or another
 * `pool` name) gets its own. Limits are per instance: N instances let N times as many requests
 * reach the core.
 *
 * Under contention no caller (a TPP, or a client network without one) holds more than
 * `caller_share` of a pool's slots or of its queue: one TPP's slow requests leave the other
 * slots to the others, and a freed slot goes to the longest waiter whose caller is below its
 * share.
 *
 * With `adaptive`, the pool's limit follows the core's latency instead of staying at
 * `max_in_flight` (where it starts): Netflix's Gradient2 (`gradient`: the limit shrinks when the
 * core answers more than `tolerance` times slower than its long-term average) or AIMD (`aimd`:
 * it shrinks by `backoff` when a request times out, fails or is refused as overloaded), always
 * within `min_in_flight` and `max_in_flight` (`src/upstream/adaptive_limit.ts`). The writes pool
 * keeps its fixed limit. The limit of each pool is in `/metrics` (`xs2a_upstream_limit`).
 */
import { z } from "zod";
import { defineCheck, type GatewayContext, modal } from "../src/core/check.ts";
import { GatewayError } from "../src/psd2/errors.ts";
import { RETRY_AFTER_SECONDS } from "../src/psd2/retry_after.ts";
import { duration, TIMER_MAX } from "../src/lib/fields.ts";
import type { AdaptiveLimits, Limits, Outcome, Shed } from "../src/upstream/limiter.ts";
import { identifiers } from "../src/psd2/identifiers.ts";
import { callerId } from "./_shared_state.ts";

const poolName = z.string().regex(/^[a-z][a-z0-9_]*$/, "must be a name in snake_case");

function maxInFlight() {
  return z.int({ error: "must be a whole number" }).min(1, "must be at least 1");
}

function maxQueue() {
  return z.int({ error: "must be a whole number" }).min(0, "must be at least 0").default(0)
    .describe("Requests that may wait for a slot at once; more are shed at once (0: none wait)");
}

function queueTimeout() {
  return duration({ max: TIMER_MAX }).prefault("1s").describe(
    "How long a request waits for a slot before it is shed",
  );
}

const writesSchema = z.object({
  max_in_flight: maxInFlight().describe("Writes at the core at once, from this instance"),
  max_queue: maxQueue(),
  queue_timeout: queueTimeout(),
}).strict();

const adaptiveSchema = z.object({
  algorithm: z.enum(["gradient", "aimd"]).default("gradient").describe(
    "gradient: the limit shrinks as the core answers slower than its long-term average (Netflix Gradient2); aimd: it grows by one while nothing fails and shrinks by backoff after a timeout, failure or overload answer",
  ),
  min_in_flight: z.int({ error: "must be a whole number" }).min(1, "must be at least 1")
    .default(1).describe("The lowest the limit goes"),
  max_in_flight: maxInFlight().describe("The highest the limit goes, from this instance"),
  window: duration({ min: "100ms", max: "1h" }).prefault("1s").describe(
    "How long answers are measured (and at least 11 of them) before the limit moves",
  ),
  tolerance: z.number().min(1, "must be at least 1").default(1.5).describe(
    "gradient: how many times slower than its long-term average the core may answer before the limit shrinks",
  ),
  backoff: z.number().min(0.5, "must be at least 0.5").lt(1, "must be less than 1").default(0.9)
    .describe("aimd: what the limit is multiplied by after a timeout, failure or overload answer"),
  timeout: duration({ max: TIMER_MAX }).prefault("5s").describe(
    "aimd: an answer slower than this counts as a failure",
  ),
}).strict();

/** The core's statuses that say it is overloaded or unreachable (a drop, as a timeout). */
const OVERLOADED = new Set([429, 502, 503, 504]);

/**
 * How the core handled the request, for the adaptive limit: answered, dropped (the proxy's
 * timeout, connection error or cut-off answer, or an overload status), or not sent (no measure).
 */
function outcome(c: GatewayContext): Outcome | undefined {
  const upstream = c.get("upstream");
  if (upstream) return OVERLOADED.has(upstream.status) ? "dropped" : "ok";
  return c.get("findings").some((f) => f.check === "proxy") ? "dropped" : undefined;
}

function adaptiveOf(
  options: z.output<typeof adaptiveSchema>,
  start: number | undefined,
): AdaptiveLimits {
  const min = options.min_in_flight;
  const max = options.max_in_flight;
  return {
    algorithm: options.algorithm,
    min,
    max,
    initial: Math.max(min, Math.min(max, start ?? min)),
    windowMs: options.window,
    tolerance: options.tolerance,
    backoff: options.backoff,
    timeoutMs: options.timeout,
  };
}

/** Whether the operation changes something at the core (its own pool under `writes`). */
function isWrite(method: string): boolean {
  return method !== "GET" && method !== "HEAD";
}

function limitsOf(options: z.output<typeof writesSchema>): Limits {
  return {
    maxInFlight: options.max_in_flight,
    maxQueue: options.max_queue,
    queueTimeoutMs: options.queue_timeout,
  };
}

export const upstreamLimits = defineCheck({
  key: "upstream_limits",
  description: "Requests at the core at once are bounded; excess waits briefly or gets 503",
  options: modal({
    pool: poolName.default("core").describe(
      "Name of the pool; operations with the same pool name and limits share its slots",
    ),
    max_in_flight: maxInFlight().optional().describe(
      "Requests at the core at once, from this instance (unset: no limit); with adaptive, where the limit starts",
    ),
    max_queue: maxQueue(),
    queue_timeout: queueTimeout(),
    writes: writesSchema.optional().describe(
      "Limits of a separate pool for writes (POST, PUT, DELETE); unset: writes share the pool",
    ),
    caller_share: z.number().gt(0, "must be more than 0").max(1, "must be at most 1").default(0.5)
      .describe(
        "The most of a pool's slots (rounded up) and of its queue one caller (a TPP, or a client network without one) holds at once; 1: no share",
      ),
    adaptive: adaptiveSchema.optional().describe(
      "The pool's limit follows the core's latency within min_in_flight and max_in_flight (the writes pool stays fixed); unset: fixed at max_in_flight",
    ),
  }),
  validate(options) {
    const adaptive = options.adaptive;
    if (!adaptive || adaptive.min_in_flight <= adaptive.max_in_flight) return [];
    return [
      `adaptive.min_in_flight: must be at most adaptive.max_in_flight (${adaptive.max_in_flight}), got ${adaptive.min_in_flight}`,
    ];
  },
  create(options, { operation, services, sections }) {
    const write = isWrite(operation.method);
    const own = write ? options.writes : undefined;
    const adaptive = own || !options.adaptive
      ? undefined
      : adaptiveOf(options.adaptive, options.max_in_flight);
    const limits = own
      ? limitsOf(own)
      : adaptive
      ? { ...limitsOf({ ...options, max_in_flight: adaptive.initial }), adaptive }
      : options.max_in_flight === undefined
      ? undefined
      : limitsOf({ ...options, max_in_flight: options.max_in_flight });
    if (!limits) return undefined;
    const name = own ? `${options.pool}:writes` : options.pool;
    const share = options.caller_share < 1 ? options.caller_share : undefined;
    const pool = services.limits.pool(name, { ...limits, callerShare: share });
    const ids = identifiers(sections.identifiers);
    const shedCells = {
      full: services.metrics.shed.cell({ pool: name, reason: "full" }),
      timeout: services.metrics.shed.cell({ pool: name, reason: "timeout" }),
    };
    const busy = (reason: Shed) => {
      shedCells[reason].value++;
      return new GatewayError(
        503,
        "UPSTREAM_UNAVAILABLE",
        reason === "full"
          ? "The bank is busy: too many requests are waiting for it"
          : `The bank is busy: no request slot became free within ${limits.queueTimeoutMs} ms`,
        { headers: { "retry-after": String(RETRY_AFTER_SECONDS.upstreamBusy) } },
      );
    };
    return async (c, next) => {
      const taken = pool.acquire(callerId(c, ids));
      const slot = taken instanceof Promise ? await taken : taken;
      if (typeof slot !== "function") throw busy(slot);
      try {
        await next();
      } finally {
        slot(adaptive ? outcome(c) : undefined);
      }
    };
  },
});
