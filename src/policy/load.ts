/**
 * The policy file: its zod schema, assembled from the checks' own option schemas, and its
 * loading (YAML, `${ENV}` references, validation, resolution per operation).
 *
 * Options are given at three levels: `defaults` (every operation), `groups.<group>` and
 * `operations.<operationId>`; for each check, the fields set at a more specific level replace the
 * same fields of a less specific one. The result is one options object per check and operation,
 * parsed by the check's schema (so defaults apply and the factory never sees invalid options).
 */
import { z } from "zod";
import { GROUPS, type Operation, OPERATIONS, templateParams } from "../psd2/catalogue.ts";
import type { Check } from "../core/check.ts";
import type { Pipeline, Terminal } from "../core/chain.ts";
import { type PolicySections, SECTIONS } from "../sections/sections.ts";
import { pathTemplate } from "../lib/fields.ts";
import { policyDocument } from "../lib/policy_files.ts";
import { loadX509For } from "../pki/x509.ts";

/**
 * Policy schemas are parsed once per start or reload: without zod's compiled fast path, whose
 * code generation costs more than it saves for one parse (part of the cold start).
 */
const JITLESS = { jitless: true } as const;

/** A policy file that cannot be used; `problems` lists every problem found. */
export class PolicyError extends Error {
  readonly problems: string[];
  constructor(file: string, problems: string[]) {
    super(`Policy file "${file}" is invalid:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "PolicyError";
    this.problems = problems;
  }
}

/** An operation with the options of every check of its chain, resolved. */
export interface ResolvedOperation {
  operation: Operation;
  /** Options per check key, after defaults, group and operation overrides. */
  options: Record<string, Record<string, unknown>>;
}

/** A loaded policy. */
export type Policy = PolicySections & {
  file: string;
  /** The checks the policy was resolved with, in the order they run. */
  checks: readonly Check[];
  /** The terminal handler it was resolved with (its options sit beside the checks'). */
  terminal: Terminal;
  operations: ResolvedOperation[];
};

const routeSchema = z.object({
  path: pathTemplate().optional().describe(
    "Public path template of the operation, with the same {parameters} as the catalogue's",
  ),
  upstream_path: pathTemplate().optional().describe(
    "Path template on the upstream, with the same {parameters}; default: the public path under upstream.prefix",
  ),
}).strict().describe("Where the operation is served and forwarded");

/**
 * The options of one check at one level: every field optional, nothing else allowed. Its `id`
 * names its definition in the JSON Schema after the check, so that adding a check adds its own
 * lines there and renames nothing (zod numbers definitions without one).
 */
function levelOf(check: Configured) {
  const shape = Object.fromEntries(
    Object.entries(check.options.shape).map(([name, field]) => [
      name,
      (field as z.ZodType).optional(),
    ]),
  );
  return z.object(shape).strict().describe(check.description).meta({ id: `check.${check.key}` });
}

/** What has options in the policy: a check or the terminal handler. */
type Configured = Omit<Check, "create">;

/** Everything that has options in the policy: the checks in order, then the terminal handler. */
function keyed({ checks, terminal }: Pipeline): readonly Configured[] {
  return [...checks, terminal];
}

function levelSchema(pipeline: Pipeline) {
  return z.object(
    Object.fromEntries(keyed(pipeline).map((check) => [check.key, levelOf(check).optional()])),
  ).strict().meta({ id: "level" });
}

/** The schema of a whole policy file (what `z.toJSONSchema` turns into the editor schema). */
export function policySchema(pipeline: Pipeline) {
  const level = levelSchema(pipeline);
  const operationLevel = level.extend({ route: routeSchema.optional() }).meta({
    id: "operation_level",
  });
  return z.object({
    $schema: z.string().optional().describe("The JSON Schema of this file, for editors"),
    ...SECTIONS,
    defaults: level.default({}).describe("Check options for every operation"),
    groups: z.object(Object.fromEntries(GROUPS.map((g) => [g, level.optional()]))).strict()
      .default({}).describe("Check options per operation group, over the defaults"),
    operations: z.object(
      Object.fromEntries(OPERATIONS.map((op) => [op.id, operationLevel.optional()])),
    ).strict().default({}).describe("Check options and route per operation id, over the group"),
  }).strict();
}

/**
 * The JSON Schema of the policy file, as committed in `config/policy.schema.json`. Its only
 * definitions are the named ones (each check's options, a level, an operation's level); whatever
 * else is used twice is written out where it is used, since a shared definition would get a
 * numbered name that shifts when a check is added.
 */
export function policyJsonSchema(pipeline: Pipeline): string {
  const schema = z.toJSONSchema(policySchema(pipeline), {
    io: "input",
    unrepresentable: "any",
    reused: "inline",
  });
  return JSON.stringify({ title: "xs2a-edge policy", ...schema }, null, 2) + "\n";
}

const ENV_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** Replaces `${NAME}` and `${NAME:-default}` in every string; unset names are problems. */
function substituteEnv(
  value: unknown,
  env: (name: string, fallback?: string) => string | undefined,
  where: { path: string; problems: string[] },
): unknown {
  if (typeof value === "string") {
    return value.replace(ENV_REF, (_, name: string, fallback?: string) => {
      const found = env(name, fallback);
      if (found === undefined) {
        where.problems.push(`${where.path || "(root)"}: environment variable "${name}" is not set`);
        return "";
      }
      return found;
    });
  }
  if (Array.isArray(value)) {
    return value.map((v, i) => substituteEnv(v, env, { ...where, path: `${where.path}[${i}]` }));
  }
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        substituteEnv(v, env, { ...where, path: where.path ? `${where.path}.${k}` : k }),
      ]),
    );
  }
  return value;
}

/**
 * Options that were renamed when every duration became a text with a unit: an old policy is
 * refused with the new name rather than a bare "unknown key".
 */
const RENAMED: Record<string, string> = {
  timeout_ms: 'timeout, a duration such as "10s"',
  read_timeout_ms: 'read_timeout, a duration such as "10s"',
  fetch_timeout_ms: 'fetch_timeout, a duration such as "2s"',
  leeway_seconds: 'leeway, a duration such as "30s"',
  refetch_interval_seconds: 'refetch_interval, a duration such as "60s"',
  cache_seconds: 'cache_max_age, a duration such as "10m"',
  sigt_skew_seconds: 'sigt_skew, a duration such as "5m"',
  clock_skew_seconds: 'clock_skew, a duration such as "60s"',
};

function describeIssue(issue: z.core.$ZodIssue): string {
  const path = issue.path.map(String).join(".") || "(root)";
  if (issue.code === "unrecognized_keys") {
    const kind = issue.path.length > 1
      ? "key"
      : issue.path[0] === "operations"
      ? "operation"
      : issue.path[0] === "groups"
      ? "group"
      : "key";
    const keys = issue.keys.map((k) => `"${k}"${RENAMED[k] ? ` (now ${RENAMED[k]})` : ""}`);
    return `${path}: unknown ${kind} ${keys.join(", ")}`;
  }
  return `${path}: ${issue.message}`;
}

function checkTemplate(op: Operation, template: string, where: string): string[] {
  const want = templateParams(op.path).sort().join(",");
  const got = templateParams(template).sort().join(",");
  return want === got
    ? []
    : [`${where}: must use the parameters {${want.split(",").join("}, {")}}, got "${template}"`];
}

type Level = Record<string, Record<string, unknown> | undefined>;

/**
 * Operations that share a method and a public path (parameter names aside): the router would
 * serve the first and never the other, so the policy is refused. The operations whose route the
 * policy moved are named.
 */
function sharedRoutes(operations: ResolvedOperation[], moved: (id: string) => boolean): string[] {
  const byRoute = Map.groupBy(
    operations,
    ({ operation }) => `${operation.method} ${operation.path.replace(/\{[^}]*\}/g, "{}")}`,
  );
  const problems: string[] = [];
  for (const shared of byRoute.values()) {
    if (shared.length < 2) continue;
    const blamed = shared.some((r) => moved(r.operation.id))
      ? shared.filter((r) => moved(r.operation.id))
      : shared;
    for (const { operation } of blamed) {
      const others = shared.filter((r) => r.operation !== operation).map((r) => r.operation.id);
      problems.push(
        `operations.${operation.id}.route.path: ${operation.method} "${operation.path}" is already the route of ${
          others.join(", ")
        }`,
      );
    }
  }
  return problems;
}

/** Problems of resolved options: the same problem of a check is listed once, with its operations. */
class OptionProblems {
  readonly #byText = new Map<string, string[]>();

  add(check: string, operation: string, text: string) {
    const key = `${check}: ${text}`;
    this.#byText.set(key, [...this.#byText.get(key) ?? [], operation]);
  }

  list(): string[] {
    return [...this.#byText].map(([key, ops]) => {
      const [check, ...text] = key.split(": ");
      const where = ops.length === OPERATIONS.length
        ? "every operation"
        : ops.length > 5
        ? `${ops.slice(0, 5).join(", ")} and ${ops.length - 5} more`
        : ops.join(", ");
      return `${check} for ${where}: ${text.join(": ")}`;
    });
  }
}

function resolveOperation(
  checks: readonly Configured[],
  op: Operation,
  levels: { defaults: Level; group: Level; operation: Level },
  problems: string[],
  optionProblems: OptionProblems,
  parsedOptions: Map<string, z.ZodSafeParseResult<unknown>>,
): ResolvedOperation {
  const route = levels.operation.route as z.output<typeof routeSchema> | undefined;
  const where = `operations.${op.id}.route`;
  if (route?.path) problems.push(...checkTemplate(op, route.path, `${where}.path`));
  if (route?.upstream_path) {
    problems.push(...checkTemplate(op, route.upstream_path, `${where}.upstream_path`));
  }
  const operation = {
    ...op,
    path: route?.path ?? op.path,
    upstreamPath: route?.upstream_path ?? op.upstreamPath,
  };
  const options: ResolvedOperation["options"] = {};
  for (const check of checks) {
    const merged = {
      ...levels.defaults[check.key],
      ...levels.group[check.key],
      ...levels.operation[check.key],
    };
    // Most operations resolve a check to the same options: each distinct set is parsed once.
    const key = `${check.key} ${JSON.stringify(merged)}`;
    let parsed = parsedOptions.get(key) as
      | z.ZodSafeParseResult<Record<string, unknown>>
      | undefined;
    if (!parsed) {
      parsed = check.options.safeParse(merged, JITLESS);
      parsedOptions.set(key, parsed);
    }
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        optionProblems.add(check.key, op.id, describeIssue(issue));
      }
      continue;
    }
    for (const problem of check.validate?.(parsed.data, operation) ?? []) {
      optionProblems.add(check.key, op.id, problem);
    }
    options[check.key] = parsed.data;
  }
  return { operation, options };
}

/**
 * Options of a policy load: the checks and the terminal handler to resolve the policy with (the
 * gateway's are `middleware/mod.ts`), and where `${NAME}` references come from.
 */
export interface LoadOptions extends Pipeline {
  /** Environment lookup for `${NAME}` references (default: `Deno.env.get`). */
  env?: (name: string) => string | undefined;
  /** Value of a `${NAME}` that is neither set nor has a `:-default` (default: a problem). */
  placeholder?: (name: string) => string | undefined;
}

/**
 * Parses and validates a policy from its YAML text; throws {@link PolicyError} listing every
 * problem with its path in the file.
 */
export function parsePolicy(file: string, text: string, options: LoadOptions): Policy {
  const lookup = options.env ?? ((name: string) => Deno.env.get(name));
  const env = (name: string, fallback?: string) =>
    lookup(name) ?? fallback ?? options.placeholder?.(name);
  const document = policyDocument(text);
  if (document.errors.length > 0) {
    throw new PolicyError(
      file,
      document.errors.map((e) => `line ${e.linePos?.[0].line ?? "?"}: ${e.message.split("\n")[0]}`),
    );
  }
  const problems: string[] = [];
  const raw = substituteEnv(document.toJS() ?? {}, env, { path: "", problems });
  const parsed = policySchema(options).safeParse(raw, JITLESS);
  if (!parsed.success) {
    problems.push(...parsed.error.issues.map(describeIssue));
    throw new PolicyError(file, problems);
  }
  // Merge the raw (not defaulted) levels, so that a default never hides a less specific value.
  const input = raw as { defaults?: Level; groups?: Record<string, Level>; operations?: Level };
  const optionProblems = new OptionProblems();
  const parsedOptions = new Map<string, z.ZodSafeParseResult<unknown>>();
  const operations = OPERATIONS.map((op) =>
    resolveOperation(
      keyed(options),
      op,
      {
        defaults: input.defaults ?? {},
        group: input.groups?.[op.group] ?? {},
        operation: (input.operations?.[op.id] ?? {}) as Level,
      },
      problems,
      optionProblems,
      parsedOptions,
    )
  );
  problems.push(
    ...sharedRoutes(operations, (id) => {
      const route = input.operations?.[id]?.route as { path?: string } | undefined;
      return route?.path !== undefined;
    }),
    ...optionProblems.list(),
  );
  if (problems.length > 0) throw new PolicyError(file, problems);
  const { defaults: _d, groups: _g, operations: _o, $schema: _s, ...sections } = parsed.data;
  const { checks, terminal } = options;
  return { ...sections, file, checks, terminal, operations } as Policy;
}

/** Reads, parses and validates a policy file. */
export async function loadPolicy(file: string, options: LoadOptions): Promise<Policy> {
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (error) {
    throw new PolicyError(file, [`cannot read the file: ${(error as Error).message}`]);
  }
  await loadX509For(text);
  return parsePolicy(file, text, options);
}
