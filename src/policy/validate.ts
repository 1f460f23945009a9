/**
 * The one validation of a policy, shared by start-up, reloads and the policy tools: the file's
 * schema and cross-field rules (`parsePolicy`), then every operation's chain built as the gateway
 * builds it. A rule that only a check's factory can enforce (a rate limit that a Redis Cluster
 * cannot count, because it does not count by TPP) is thus found by `policy:check` too, with the
 * same text, instead of first by a refused start.
 */
import { buildChain } from "../core/chain.ts";
import { failureAnswer } from "../core/answer.ts";
import type { Services } from "../core/services.ts";
import { defaultServices } from "./services.ts";
import { memoryLogger } from "../lib/log.ts";
import { type LoadOptions, parsePolicy, type Policy, PolicyError } from "./load.ts";
import type { StoreSection } from "../sections/sections.ts";

/** A chain is never run here: its error answer is never asked for. */
const UNUSED = () => failureAnswer(undefined);

/**
 * What refuses to build in the policy's chains with `services`, each distinct problem once (a
 * rule of a check's factory usually fails for every operation alike).
 */
export function chainProblems(policy: Policy, services: Services): string[] {
  const problems = new Set<string>();
  for (const { operation, options } of policy.operations) {
    try {
      buildChain(
        { checks: policy.checks, terminal: policy.terminal, options },
        { operation, services, sections: policy },
        UNUSED,
      );
    } catch (error) {
      problems.add(error instanceof Error ? error.message : String(error));
    }
  }
  return [...problems];
}

/**
 * Services as the policy's store would make them, without connecting anywhere: what the checks'
 * factories read of the store at build time (its kind, and whether its keys carry the caller's
 * hash tag, as on a Redis Cluster whose prefix has none) is the real store's.
 */
export async function servicesShapedBy(store: StoreSection): Promise<Services> {
  const services = defaultServices({ log: memoryLogger() });
  const tagKeys = store.kind === "redis" && store.cluster &&
    !(await import("../store/redis_cluster.ts")).prefixHasTag(store.prefix);
  const shaped = Object.assign(Object.create(services.store), { kind: store.kind, tagKeys });
  return { ...services, store: shaped };
}

/**
 * Parses and validates a policy as start-up does, every chain included; throws
 * {@link PolicyError} listing every problem.
 */
export async function validatePolicy(
  file: string,
  text: string,
  options: LoadOptions,
): Promise<Policy> {
  const policy = parsePolicy(file, text, options);
  const problems = chainProblems(policy, await servicesShapedBy(policy.store));
  if (problems.length > 0) throw new PolicyError(file, problems);
  return policy;
}
