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
 */
import { z } from "zod";
import { defineCheck, modal } from "../src/core/check.ts";
import { GatewayError } from "../src/core/errors.ts";
import { RETRY_AFTER_SECONDS } from "../src/core/retry_after.ts";
import { duration, TIMER_MAX } from "../src/policy/fields.ts";
import type { Limits, Shed } from "../src/upstream/limiter.ts";

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
      "Requests at the core at once, from this instance (unset: no limit)",
    ),
    max_queue: maxQueue(),
    queue_timeout: queueTimeout(),
    writes: writesSchema.optional().describe(
      "Limits of a separate pool for writes (POST, PUT, DELETE); unset: writes share the pool",
    ),
  }),
  create(options, { operation, services }) {
    const write = isWrite(operation.method);
    const own = write ? options.writes : undefined;
    const limits = own
      ? limitsOf(own)
      : options.max_in_flight === undefined
      ? undefined
      : limitsOf({ ...options, max_in_flight: options.max_in_flight });
    if (!limits) return undefined;
    const name = own ? `${options.pool}:writes` : options.pool;
    const pool = services.limits.pool(name, limits);
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
    return async (_c, next) => {
      const taken = pool.acquire();
      const slot = taken instanceof Promise ? await taken : taken;
      if (typeof slot !== "function") throw busy(slot);
      try {
        await next();
      } finally {
        slot();
      }
    };
  },
});
