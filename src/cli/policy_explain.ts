/**
 * `deno task policy:explain <file> [operationId]`: prints, per operation, the effective chain in
 * order with each check's mode and resolved options (after defaults, group and operation
 * overrides), so that a reviewer sees exactly what runs without reading code.
 */
import { stringify } from "yaml";
import type { Pipeline } from "../core/chain.ts";
import { loadPolicy, type Policy, PolicyError } from "../policy/load.ts";
import { defaultServices } from "../core/services.ts";
import { memoryLogger } from "../lib/log.ts";
import { upstreamTemplate } from "../core/catalogue.ts";

/** Option names whose values are secrets: explained as set, never printed. */
const SECRET = /secret|password|token$|_key$/;

/** The options with every secret value replaced, at any depth. */
function redacted(value: unknown, name = ""): unknown {
  if (SECRET.test(name) && value !== undefined) return "(secret, set)";
  if (Array.isArray(value)) return value.map((item) => redacted(item));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redacted(v, k)]));
  }
  return value;
}

/** The explanation of one policy, for some or all operations. */
export function explain(policy: Policy, only?: string): Record<string, unknown> {
  const services = defaultServices({ log: memoryLogger() });
  const out: Record<string, unknown> = {};
  for (const { operation, options } of policy.operations) {
    if (only && operation.id !== only) continue;
    // The terminal handler (the proxy) last, as it runs.
    const chain = [...policy.checks, policy.terminal].map((check) => {
      const { mode, ...rest } = options[check.key] as Record<string, unknown>;
      const context = { operation, services, sections: policy, decisions: {}, report: () => {} };
      const applies = mode === "off" || check.create(options[check.key], context) !== undefined;
      return {
        check: check.key,
        mode: !applies ? "not applicable to this operation" : (mode ?? "always"),
        ...(Object.keys(rest).length > 0 && applies && mode !== "off"
          ? { options: redacted(rest) }
          : {}),
      };
    });
    out[operation.id] = {
      route: `${operation.method} ${operation.path} -> ${policy.upstream.url}${
        upstreamTemplate(operation, policy.upstream.prefix)
      }`,
      chain,
    };
  }
  return out;
}

/** Prints the explanation of the policy file named in `args`; returns the exit code. */
export async function policyExplain(args: string[], pipeline: Pipeline): Promise<number> {
  const [file, only] = args;
  if (!file) {
    console.error("usage: deno task policy:explain <policy file> [operationId]");
    return 2;
  }
  try {
    // Unset names without a `:-default` get a placeholder; `${NAME:-default}` keeps its default
    // (the default policy's `${METRICS_PORT:-}` and `${STORE_KIND:-memory}` were refused).
    const policy = await loadPolicy(file, {
      ...pipeline,
      placeholder: (name) => name.endsWith("_URL") ? "http://upstream.invalid" : `\${${name}}`,
    });
    if (only && !policy.operations.some((r) => r.operation.id === only)) {
      console.error(`Unknown operation "${only}"`);
      return 2;
    }
    console.log(stringify(explain(policy, only), { lineWidth: 120 }));
    return 0;
  } catch (error) {
    if (!(error instanceof PolicyError)) throw error;
    console.error(error.message);
    return 1;
  }
}
