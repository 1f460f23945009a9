/**
 * `upstream_circuit`: a circuit breaker per upstream origin (or per operation, `scope:
 * operation`). It opens after `failures` failures in a row or when `failure_ratio` of the
 * requests in `window` failed (a timeout, a connection error, a cut-off answer or a 5xx of the
 * core); while it is open every request, a write above all, is answered 503 UPSTREAM_UNAVAILABLE
 * with Retry-After without touching the core. After `open_for` one probe goes through: its
 * success closes the circuit, its failure opens it again.
 *
 * The circuit opens on the core's failure, not one caller's: each caller (a TPP, or a client
 * network without one) has a circuit of its own with these settings, which refuses only that
 * caller's requests; the origin's opens for every caller when `failing_callers` callers' circuits
 * opened within `window` (`src/upstream/caller_circuits.ts`).
 *
 * Seen in `/readyz` (an open origin circuit: not ready), `/metrics` (`xs2a_circuit_*`) and the
 * access log (the refused request's finding, and a line at each change of state). Runs before
 * `upstream_limits`: an open circuit refuses at once instead of queuing.
 */
import { z } from "zod";
import { defineCheck, type GatewayContext, modal } from "../src/core/check.ts";
import { GatewayError } from "../src/psd2/errors.ts";
import { retryAfter } from "../src/psd2/retry_after.ts";
import { duration, TIMER_MAX } from "../src/lib/fields.ts";
import type { BreakerConfig } from "../src/upstream/breaker.ts";
import { identifiers } from "../src/psd2/identifiers.ts";
import { callerId } from "./_shared_state.ts";

/** How the request ended: answered (success or 5xx), failed at the proxy, or never forwarded. */
function outcome(c: GatewayContext): "ok" | "failed" | "not sent" {
  const upstream = c.get("upstream");
  if (upstream) return upstream.status >= 500 ? "failed" : "ok";
  // The proxy's own failures (timeouts, connection errors, cut-off answers) are its findings.
  return c.get("findings").some((f) => f.check === "proxy") ? "failed" : "not sent";
}

export const upstreamCircuit = defineCheck({
  key: "upstream_circuit",
  description: "A circuit breaker towards the core: open after failures, 503 until a probe passes",
  options: modal({
    scope: z.enum(["origin", "operation"]).default("origin").describe(
      "One breaker for the upstream origin (every operation with the same options), or one per operation",
    ),
    failures: z.int().min(1, "must be at least 1").optional().describe(
      "Failures in a row that open the circuit (timeouts, connection errors, 5xx); unset: none",
    ),
    failure_ratio: z.number().gt(0, "must be more than 0").max(1, "must be at most 1").optional()
      .describe(
        "Share of failed requests in the window (0 to 1) that opens the circuit; unset: none",
      ),
    window: duration({ max: TIMER_MAX }).prefault("10s").describe(
      "The window over which failure_ratio is counted",
    ),
    min_requests: z.int().min(1, "must be at least 1").default(10).describe(
      "Requests in the window before failure_ratio is judged",
    ),
    failing_callers: z.int().min(1, "must be at least 1").default(2).describe(
      "Callers (TPPs, or client networks without a TPP) whose own circuits must open within window before the circuit opens for every caller; until then only a failing caller's requests are refused. 1: one caller's failures open it for all",
    ),
    open_for: duration({ max: TIMER_MAX }).prefault("5s").describe(
      "How long the circuit stays open before one probe is let through (Retry-After counts down to it)",
    ),
  }),
  create(options, { operation, services, sections }) {
    if (options.failures === undefined && options.failure_ratio === undefined) return undefined;
    const origin = new URL(sections.upstream.url).origin;
    const name = options.scope === "origin" ? origin : `${origin} ${operation.id}`;
    const config: BreakerConfig = {
      failures: options.failures,
      failureRatio: options.failure_ratio,
      windowMs: options.window,
      minRequests: options.min_requests,
      openMs: options.open_for,
    };
    const breaker = services.breakers.callers(name, options.scope, {
      ...config,
      needed: options.failing_callers,
    });
    const ids = identifiers(sections.identifiers);
    breaker.onCallerOpen ??= (caller, originOpened) =>
      services.log.info({
        level: "warn",
        msg: "circuit of one caller opened",
        circuit: name,
        caller,
        origin_opened: originOpened,
      });
    const rejections = services.metrics.circuitRejections.cell({ circuit: name });
    return async (c, next) => {
      const caller = callerId(c, ids);
      const admitted = breaker.admit(services.now(), caller);
      if ("retryMs" in admitted) {
        rejections.value++;
        throw new GatewayError(
          503,
          "UPSTREAM_UNAVAILABLE",
          "The bank is unavailable: requests to it are paused after repeated failures",
          { headers: { "retry-after": retryAfter(admitted.retryMs) } },
        );
      }
      await next();
      const ended = outcome(c);
      if (ended === "not sent") breaker.cancel(caller, admitted);
      else breaker.record(services.now(), caller, ended === "failed", admitted);
    };
  },
});
