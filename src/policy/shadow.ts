/**
 * Shadow rollout (Envoy RBAC's `shadow_rules`): a policy may name a candidate (`shadow: <file>`).
 * Every request is then also judged by the candidate's request steps, on a copy of the request in
 * a context of its own (its findings never mix with the live ones), in report mode: every check
 * runs, and the answer is the live chain's alone. The candidate's checks of shared state, the
 * answer-side checks, those that hold the core's capacity and the proxy never run (`SKIPPED`), so
 * the candidate touches neither the store nor the core; its metrics are its own and dropped.
 *
 * Where the two decisions differ (one refuses and the other passes, or they refuse by different
 * checks or codes), one log line (`audit: "shadow"`: operation, request id, both outcomes with the
 * check and code) and `xs2a_shadow_differences_total{op,check,live,shadow}` say so. A refusal of
 * the live chain by a check the candidate does not run counts as a pass: the candidate did not
 * judge it.
 */
import { buildJudge, type ErrorResponder, type Observer } from "../core/chain.ts";
import { Context } from "hono";
import type { Finding, GatewayContext, GatewayEnv } from "../core/check.ts";
import type { Services } from "../core/services.ts";
import type { Operation } from "../psd2/catalogue.ts";
import { createMetrics } from "../lib/metrics.ts";
import { policyFileText } from "../lib/policy_files.ts";
import { parsePolicy, type Policy, PolicyError } from "./load.ts";

/**
 * The checks a candidate never runs: shared state (consent and basket scope learn consents,
 * payments and baskets; idempotency,
 * rate limits and consent frequency count), answer rewrites, the catalogue cache (a local reply),
 * the circuit and the concurrency limits (they hold the core's capacity), and the proxy.
 */
export const SKIPPED: ReadonlySet<string> = new Set([
  "consent_scope",
  "basket_scope",
  "idempotency",
  "rate_limit",
  "consent_frequency",
  "links",
  "catalogue_cache",
  "upstream_circuit",
  "upstream_limits",
  "proxy",
]);

/** The per-request values a judge starts from (the app sets them before the chain runs). */
const ROUTE_KEYS = ["op", "params", "requestId", "psuInitiated", "terminators", "body"] as const;

/** A decision as the difference log shows it. */
function outcome(refusal: Finding | undefined) {
  return refusal
    ? { outcome: "refuse", check: refusal.check, code: refusal.code, status: refusal.status }
    : { outcome: "pass" };
}

/** Whether two decisions are the same: both pass, or both refuse by the same check and code. */
function same(a: Finding | undefined, b: Finding | undefined): boolean {
  return a === b ||
    (a !== undefined && b !== undefined && a.check === b.check && a.code === b.code);
}

/** A copy of the request in a context of its own, with the route's values and no findings. */
function judgedContext(c: GatewayContext): GatewayContext {
  const copy = new Context<GatewayEnv>(c.req.raw.clone(), { env: c.env, path: c.req.path });
  for (const key of ROUTE_KEYS) copy.set(key, c.get(key) as never);
  copy.set("findings", []);
  return copy;
}

/** The candidate of a policy that names one, ready to judge each operation's requests. */
export interface ShadowPolicy {
  file: string;
  /** The observer of one operation's chain (`buildChain`'s `observe`). */
  observer(operation: Operation): Observer;
}

/**
 * The candidate `policy.shadow` names, parsed with the policy's checks (its text read ahead with
 * the policy's files); `undefined` when the policy names none. Throws {@link PolicyError} naming the
 * candidate when it is invalid: a policy with a broken candidate does not load.
 */
export function loadShadow(
  policy: Policy,
  services: Services,
  respond: ErrorResponder,
  env: (name: string) => string | undefined = (name) => Deno.env.get(name),
): ShadowPolicy | undefined {
  const file = policy.shadow;
  if (!file) return undefined;
  let text: string;
  try {
    text = policyFileText(file);
  } catch (error) {
    throw new PolicyError(policy.file, [
      `shadow: cannot read "${file}": ${(error as Error).message}`,
    ]);
  }
  let candidate: Policy;
  try {
    // Its own upstream and store are never used: a reference to an unset variable there is no
    // problem, so every unset one gets a stand-in (a file or key the checks need still fails).
    candidate = parsePolicy(file, text, {
      checks: policy.checks,
      terminal: policy.terminal,
      env,
      placeholder: (name) => name.endsWith("_URL") ? "http://placeholder.invalid" : "",
    });
  } catch (error) {
    if (!(error instanceof PolicyError)) throw error;
    throw new PolicyError(policy.file, error.problems.map((p) => `shadow "${file}": ${p}`));
  }
  if (candidate.shadow) {
    throw new PolicyError(policy.file, [
      `shadow "${file}": a candidate names no shadow of its own`,
    ]);
  }
  // Its checks count into metrics of their own, never the gateway's.
  const quiet: Services = { ...services, metrics: createMetrics() };
  const { log, metrics } = services;
  return {
    file,
    observer(operation) {
      const resolved = candidate.operations.find((r) => r.operation.id === operation.id)!;
      const judge = buildJudge(
        { checks: candidate.checks, terminal: candidate.terminal, options: resolved.options },
        { operation: resolved.operation, services: quiet, sections: candidate },
        SKIPPED,
        respond,
      );
      return (c) => {
        const judged = judge(judgedContext(c));
        return async (refusal) => {
          const live = refusal && !SKIPPED.has(refusal.check) ? refusal : undefined;
          const shadow = await judged;
          if (same(live, shadow)) return;
          const [a, b] = [outcome(live), outcome(shadow)];
          metrics.shadowDifferences.inc({
            op: operation.id,
            check: (shadow ?? live)!.check,
            live: a.outcome,
            shadow: b.outcome,
          });
          log.info({
            msg: "the shadow policy decides otherwise",
            audit: "shadow",
            shadow: file,
            request_id: c.get("requestId") || undefined,
            op: operation.id,
            live: a,
            candidate: b,
          });
        };
      };
    },
  };
}
