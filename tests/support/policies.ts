/**
 * Policies for tests of one mechanism at a time: every check that has a mode switched off, plus
 * the options the test cares about.
 */
import { stringify } from "yaml";
import { CHECKS } from "../../middleware/mod.ts";

type Level = Record<string, Record<string, unknown>>;

/** Options of {@link passthroughPolicy}. */
export interface PolicyParts {
  defaults?: Level;
  groups?: Record<string, Level>;
  operations?: Record<string, Level>;
  /** Global sections besides `upstream` (for example `metrics`). */
  sections?: Record<string, unknown>;
}

/** Every check with a mode, off. */
export function checksOff(): Level {
  const off: Level = {};
  for (const check of CHECKS) {
    if ("mode" in check.options.shape) off[check.key] = { mode: "off" };
  }
  return off;
}

/** YAML of a policy with every modal check off and the given options over it. */
export function passthroughPolicy(parts: PolicyParts = {}): string {
  const defaults = checksOff();
  for (const [key, options] of Object.entries(parts.defaults ?? {})) {
    defaults[key] = { ...defaults[key], ...options };
  }
  return stringify({
    upstream: { url: "${UPSTREAM_URL}" },
    ...parts.sections,
    defaults,
    ...(parts.groups ? { groups: parts.groups } : {}),
    ...(parts.operations ? { operations: parts.operations } : {}),
  });
}
