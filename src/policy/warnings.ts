/**
 * Contradictions in a policy that loads: settings that do not do what they seem to, for
 * `policy:check` to show. None stops the gateway; each says what happens instead.
 */
import { OPERATIONS } from "../psd2/catalogue.ts";
import { LOOPBACK } from "../lib/terminators.ts";
import type { Policy, ResolvedOperation } from "./load.ts";

type Options = Record<string, unknown>;

/** The operations whose options of `check` match, by id. */
function where(
  policy: Policy,
  check: string,
  test: (options: Options) => boolean,
): string[] {
  return policy.operations
    .filter((resolved: ResolvedOperation) => {
      const options = resolved.options[check] as Options | undefined;
      return options !== undefined && test(options);
    })
    .map((resolved) => resolved.operation.id);
}

/** The operations of a warning, as `policy:check` lists them. */
function list(ids: string[]): string {
  if (ids.length === OPERATIONS.length) return "every operation";
  return ids.length > 5
    ? `${ids.slice(0, 5).join(", ")} and ${ids.length - 5} more`
    : ids.join(", ");
}

const on = (options: Options) => options.mode !== "off";
const hasScopes = (options: Options) => Array.isArray(options.scopes) && options.scopes.length > 0;

/**
 * The policy's contradictions, one line each: token rules that no token is required for,
 * certificates required where no TLS terminator may send them, tokens and certificates checked
 * without binding one to the other, a memory store (which holds per instance).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PIPELINE } from "../../middleware/mod.ts";
 * import { parsePolicy } from "./load.ts";
 * import { policyWarnings } from "./warnings.ts";
 *
 * const policy = parsePolicy("policy.yaml", "upstream: { url: http://core.internal }", PIPELINE);
 * const [warning] = policyWarnings(policy);
 * assert.match(warning, /^store\.kind is memory/);
 * ```
 */
export function policyWarnings(policy: Policy): string[] {
  const warnings: string[] = [];

  const unchecked = where(policy, "bearer_token", (o) => !on(o) && hasScopes(o));
  if (unchecked.length > 0) {
    warnings.push(
      `bearer_token for ${list(unchecked)}: scopes are set but the check is off, so nothing ` +
        "checks them",
    );
  }
  const optional = where(
    policy,
    "bearer_token",
    (o) => on(o) && hasScopes(o) && o.required === false,
  );
  if (optional.length > 0) {
    warnings.push(
      `bearer_token for ${list(optional)}: scopes are set with required: false, so a request ` +
        "without a token passes them",
    );
  }

  const required = where(policy, "tpp_certificate", (o) => on(o) && o.required === true);
  if (required.length > 0) {
    const terminators = policy.trust.terminators;
    if (terminators === undefined) {
      warnings.push(
        `tpp_certificate requires a certificate for ${list(required)}, but trust.terminators ` +
          `is not set: only loopback peers (${
            LOOPBACK.join(", ")
          }) may send the certificate header; list the TLS terminators`,
      );
    } else if (terminators.length === 0) {
      warnings.push(
        `tpp_certificate requires a certificate for ${list(required)}, but trust.terminators ` +
          "is empty: no peer may send the certificate header, so every such request is refused",
      );
    }
  }

  const unbound = policy.operations.filter((resolved) => {
    const token = resolved.options.bearer_token as Options | undefined;
    const certificate = resolved.options.tpp_certificate as Options | undefined;
    return token !== undefined && certificate !== undefined && on(token) && on(certificate) &&
      certificate.required === true && token.require_binding !== true;
  }).map((resolved) => resolved.operation.id);
  if (unbound.length > 0) {
    warnings.push(
      `bearer_token for ${list(unbound)}: certificates and tokens are both required, but a ` +
        "token need not be bound to the certificate (require_binding), so one TPP's token " +
        "is good with another TPP's certificate",
    );
  }

  if (policy.store.kind === "memory") {
    warnings.push(
      "store.kind is memory: X-Request-ID replay, rate limits and consent frequency hold per " +
        "instance, so under deno serve --parallel, on Deno Deploy or with several gateways each " +
        "instance decides alone; use sqlite there on one machine, kv on Deno Deploy, or redis or " +
        "upstash",
    );
  }
  return warnings;
}
