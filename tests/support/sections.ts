/**
 * The global policy sections of a minimal valid policy, for tests that build one check by hand.
 */
import { PIPELINE } from "../../middleware/mod.ts";
import { parsePolicy } from "../../src/policy/load.ts";
import type { PolicySections } from "../../src/policy/sections.ts";

/** Sections of `upstream: http://127.0.0.1:9` with every other section at its defaults. */
export const TEST_SECTIONS: PolicySections = parsePolicy(
  "test-sections.yaml",
  "upstream:\n  url: http://127.0.0.1:9\n",
  { ...PIPELINE, env: () => undefined },
);
