/**
 * The global policy sections of a minimal valid policy, for tests that build one check by hand.
 */
import { PIPELINE } from "../../middleware/mod.ts";
import { parsePolicy } from "../../src/policy/load.ts";
import type { PolicySections } from "../../src/sections/sections.ts";
import type { Operation } from "../../src/psd2/catalogue.ts";
import type { BuildContext } from "../../src/core/check.ts";
import type { GatewayError } from "../../src/psd2/errors.ts";
import { defaultServices } from "../../src/policy/services.ts";
import { memoryLogger } from "../../src/lib/log.ts";

/** Sections of `upstream: http://127.0.0.1:9` with every other section at its defaults. */
export const TEST_SECTIONS: PolicySections = parsePolicy(
  "test-sections.yaml",
  "upstream:\n  url: http://127.0.0.1:9\n",
  { ...PIPELINE, env: () => undefined },
);

/**
 * What a factory gets when a test builds one check by hand for `operation`: the real services
 * (memory log), the sections above, a fresh decision plan, and a report that keeps its findings.
 */
export function buildContext(
  operation: Operation,
): BuildContext & { reported: GatewayError[] } {
  const reported: GatewayError[] = [];
  return {
    operation,
    services: defaultServices({ log: memoryLogger() }),
    sections: TEST_SECTIONS,
    decisions: {},
    report: (_c, error) => reported.push(error),
    reported,
  };
}
