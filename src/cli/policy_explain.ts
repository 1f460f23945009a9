/**
 * `deno task policy:explain [--env-file <file>] <file> [operationId]`: prints, per operation, the
 * effective chain in order with each check's mode and resolved options (after defaults, group and
 * operation overrides), so that a reviewer sees exactly what runs without reading code. The file
 * is read and validated as `policy:check` does (`checkPolicyFile`): a file it explains starts.
 */
import { stringify } from "yaml";
import type { Pipeline } from "../core/chain.ts";
import type { Policy } from "../policy/load.ts";
import { checkPolicyFile } from "./policy_check.ts";
import { defaultServices } from "../policy/services.ts";
import { memoryLogger } from "../lib/log.ts";
import { upstreamTemplate } from "../psd2/catalogue.ts";

const USAGE = "usage: deno task policy:explain [--env-file <file>] <policy file> [operationId]";

/** Option names whose values are secrets: explained as set, never printed. */
const SECRET = /secret|password|token$|_key$/;

/** The options with every secret value replaced, at any depth. */
export function redacted(value: unknown, name = ""): unknown {
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
  // The same reading and validation as policy:check: unset variables listed (on stderr, so that
  // stdout stays YAML), their values given stand-ins, `${NAME:-default}` keeping its default.
  const checked = await checkPolicyFile(args, pipeline, { usage: USAGE, say: console.error });
  if ("code" in checked) {
    if (checked.code !== 0) return checked.code;
    console.error("cannot explain it before those variables are set (or given in --env-file)");
    return 1;
  }
  const { policy, positional: [, only] } = checked;
  if (only && !policy.operations.some((r) => r.operation.id === only)) {
    console.error(`Unknown operation "${only}"`);
    return 2;
  }
  console.log(stringify(explain(policy, only), { lineWidth: 120 }));
  return 0;
}
