/**
 * The durations of a policy as its file writes them. A parsed policy holds every duration in
 * milliseconds (`duration()` of src/lib/fields.ts); `policy:diff` prints them again with a unit
 * (`24h`, `5s`, `400ms`), finding which options are durations in the policy's JSON Schema.
 */
import type { Pipeline } from "../core/chain.ts";
import { policyJsonSchema } from "../policy/load.ts";
import { parseDuration } from "../lib/fields.ts";

// deno-lint-ignore no-explicit-any
type Schema = any;

/** The pattern `duration()` gives its input in the JSON Schema. */
const DURATION_PATTERN = "^(0|[1-9][0-9]*)(ms|s|m|h|d)$";

const UNITS: [string, number][] = [["h", 3_600_000], ["m", 60_000], ["s", 1000], ["ms", 1]];
const DAY = 86_400_000;

/**
 * A duration in milliseconds as a policy writes it: whole days from a week up (`400d`), else the
 * largest unit that divides it (`24h`, `48h`, `90s`, `400ms`), as the policy's defaults write
 * them; the file may have said `1d` for `24h`, the same duration.
 */
export function durationText(ms: number): string {
  if (ms >= 7 * DAY && ms % DAY === 0) return `${ms / DAY}d`;
  const [unit, size] = UNITS.find(([, size]) => ms % size === 0) ?? ["ms", 1];
  return `${ms / size}${unit}`;
}

/**
 * The text of the milliseconds at an option path (`idempotency.retention`,
 * `rate_limit.limits.psu.window`, `store.timeout`: a check's or a section's key, then the option's
 * keys and array indexes), or `undefined` where the path is not a duration. The option's default
 * keeps the default's own text (`60s`, not `1m`).
 */
export type DurationWriter = (path: string, ms: number) => string | undefined;

/** The durations of the pipeline's checks and of the policy's sections. */
export function durationWriter(pipeline: Pipeline): DurationWriter {
  const root: Schema = JSON.parse(policyJsonSchema(pipeline));
  const patterns: { parts: string[]; fallback?: string }[] = [];
  const resolve = (schema: Schema): Schema =>
    typeof schema?.$ref === "string"
      ? resolve(root.$defs[schema.$ref.replace("#/$defs/", "")])
      : schema;
  const walk = (raw: Schema, path: string[], depth: number) => {
    const schema = resolve(raw);
    if (!schema || typeof schema !== "object" || depth > 12) return;
    if (schema.pattern === DURATION_PATTERN) {
      patterns.push({ parts: path, fallback: raw?.default ?? schema.default });
    }
    for (const [key, item] of Object.entries(schema.properties ?? {})) {
      walk(item, [...path, key], depth + 1);
    }
    if (typeof schema.additionalProperties === "object") {
      walk(schema.additionalProperties, [...path, "*"], depth + 1);
    }
    if (schema.items) walk(schema.items, [...path, "*"], depth + 1);
    for (
      const branch of [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])]
    ) {
      walk(branch, path, depth + 1);
    }
  };
  for (const [name, section] of Object.entries(root.properties)) {
    if (!["$schema", "defaults", "groups", "operations"].includes(name)) walk(section, [name], 0);
  }
  walk(root.$defs.level, [], 0);
  return (path, ms) => {
    const parts = path.split(".");
    const found = patterns.find((pattern) =>
      pattern.parts.length === parts.length &&
      pattern.parts.every((part, i) => part === "*" || part === parts[i])
    );
    if (!found) return undefined;
    const fallback = typeof found.fallback === "string" ? found.fallback : undefined;
    return fallback !== undefined && parseDuration(fallback) === ms ? fallback : durationText(ms);
  };
}
