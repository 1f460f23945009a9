/**
 * Test policies as typed objects instead of YAML text: the policy file's input type, derived from
 * the checks' own zod option schemas and the global sections' schemas, so that a misspelt option
 * or a wrong value type is a type error in the test. `startGateway({ policy })` takes such an
 * object; {@link policyYaml} gives the file text for tests that write or parse files.
 *
 * ```ts
 * import assert from "node:assert/strict";
 * import { buildPolicy, passthroughPolicy, policyYaml } from "./policies.ts";
 *
 * const base = buildPolicy({ defaults: { idempotency: { wait: "2s", poll: "20ms" } } });
 * const policy = buildPolicy(base, { defaults: { idempotency: { fail: "closed" } } });
 * assert.deepEqual(policy.defaults, { idempotency: { wait: "2s", poll: "20ms", fail: "closed" } });
 * assert.match(policyYaml(policy), /url: \$\{UPSTREAM_URL\}/);
 * assert.equal(passthroughPolicy().defaults?.request_id?.mode, "off");
 * ```
 */
import { stringify } from "yaml";
import type { z } from "zod";
import { CHECKS } from "../../middleware/mod.ts";
import type { proxy } from "../../middleware/proxy.ts";
import type { Group } from "../../src/psd2/catalogue.ts";
import type { SECTIONS } from "../../src/sections/sections.ts";

/** Everything with options at a level: the checks and the terminal handler. */
type Keyed = typeof CHECKS[number] | typeof proxy;

/** The options of every check at one level (`defaults`, a group, an operation): all optional. */
export type LevelInput = { [C in Keyed as C["key"]]?: Partial<z.input<C["options"]>> };

/** An operation's level: check options and its route. */
export type OperationInput = LevelInput & { route?: { path?: string; upstream_path?: string } };

/** A policy file's content, as the loader reads it (before `${NAME}` references are replaced). */
export type PolicyInput =
  & { [K in keyof typeof SECTIONS]?: z.input<typeof SECTIONS[K]> }
  & {
    $schema?: string;
    defaults?: LevelInput;
    groups?: { [G in Group]?: LevelInput };
    /** Per operation id (`src/psd2/catalogue.ts`). */
    operations?: Record<string, OperationInput>;
  };

type Options = Record<string, unknown>;
type Level = Record<string, Options | undefined>;

/** `over`'s check options on `under`'s, field by field (as the policy's levels merge). */
function mergeLevel(under: Level | undefined, over: Level | undefined): Level | undefined {
  if (!over) return under;
  const merged: Level = { ...under };
  for (const [key, options] of Object.entries(over)) {
    const below = merged[key];
    merged[key] = below && options && typeof options === "object" && !Array.isArray(options)
      ? { ...below, ...options }
      : options;
  }
  return merged;
}

function mergeLevels(
  under: Record<string, Level | undefined> | undefined,
  over: Record<string, Level | undefined> | undefined,
): Record<string, Level | undefined> | undefined {
  if (!over) return under;
  const merged = { ...under };
  for (const [name, level] of Object.entries(over)) merged[name] = mergeLevel(merged[name], level);
  return merged;
}

/**
 * A policy from parts, later parts over earlier ones: the check options of `defaults`, of each
 * group and of each operation merged field by field (a field a later part sets replaces the
 * earlier value), every global section replaced as a whole. The upstream is `${UPSTREAM_URL}`
 * (what {@link startGateway} sets) unless a part names one.
 */
export function buildPolicy(...parts: PolicyInput[]): PolicyInput {
  let policy: PolicyInput = { upstream: { url: "${UPSTREAM_URL}" } };
  for (const part of parts) {
    const { defaults, groups, operations, ...sections } = part;
    policy = {
      ...policy,
      ...sections,
      defaults: mergeLevel(policy.defaults as Level, defaults as Level) as LevelInput,
      groups: mergeLevels(policy.groups as Record<string, Level>, groups as Record<string, Level>),
      operations: mergeLevels(
        policy.operations as Record<string, Level>,
        operations as Record<string, Level>,
      ) as PolicyInput["operations"],
    };
  }
  for (const key of ["defaults", "groups", "operations"] as const) {
    if (policy[key] === undefined) delete policy[key];
  }
  return policy;
}

/** Every check with a mode, off. */
export function checksOff(): LevelInput {
  const off: Level = {};
  for (const check of CHECKS) {
    if ("mode" in check.options.shape) off[check.key] = { mode: "off" };
  }
  return off as LevelInput;
}

/**
 * A policy for tests of one mechanism at a time: every check that has a mode switched off, then
 * the parts over it (see {@link buildPolicy}).
 */
export function passthroughPolicy(...parts: PolicyInput[]): PolicyInput {
  return buildPolicy({ defaults: checksOff() }, ...parts);
}

/** The policy file's text, for tests that write a file or whose subject is the loader. */
export function policyYaml(policy: PolicyInput): string {
  return stringify(policy);
}

/** The policy as {@link startGateway} and the loader take it: text as it is, objects as YAML. */
export function policyText(policy: string | PolicyInput): string {
  return typeof policy === "string" ? policy : policyYaml(policy);
}
