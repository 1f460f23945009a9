/**
 * `deno task policy:check [--env-file <file>] <file>`: validates a policy file and lists every
 * problem with its path in the file; exits 0 only when the file is clean.
 *
 * The validation is start-up's (`validatePolicy`): the file, then every operation's chain as the
 * gateway builds it, with the store the policy names (a Redis Cluster's rules included), so that
 * a file that passes here starts.
 *
 * A file is usually checked without its secrets. The environment variables it uses that are not
 * set are listed first; every value that uses one is then left unchecked (a stand-in would only
 * give misleading problems such as `metrics.token: Too small` or `cannot read file
 * "${QTSP_CA_BUNDLE}"`), and everything else is checked. `--env-file` reads variables from a
 * dotenv file (its values win over the process environment). A YAML syntax error is shown whole:
 * line, column and the excerpt.
 */
import { loadX509For } from "../pki/x509.ts";
import { parseDocument } from "yaml";
import type { Pipeline } from "../core/chain.ts";
import { policyWarnings } from "../policy/warnings.ts";
import { type Policy, PolicyError } from "../policy/load.ts";
import { validatePolicy } from "../policy/validate.ts";
import { readPolicyFiles } from "../lib/policy_files.ts";

const USAGE = "usage: deno task policy:check [--env-file <file>] [--probe] <policy file>";

/** `${NAME}` without a `:-default` (a reference with a default is never unset). */
const REQUIRED_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** The levels of check options: `defaults`, `groups.<group>`, `operations.<operationId>`. */
const LEVELS = new Set(["defaults", "groups", "operations"]);

/** The variables of a dotenv file: `NAME=value`, `export NAME=value`, quotes, `#` comments. */
export function parseEnvFile(text: string, file: string): Map<string, string> {
  const vars = new Map<string, string>();
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const match = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!match) throw new Error(`${file}, line ${i + 1}: expected NAME=value, got "${line}"`);
    let value = match[2];
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) {
      value = value.slice(1, -1).replace(/\\n/g, "\n").replace(/\\(["\\])/g, "$1");
    } else if (value.startsWith("'") && value.endsWith("'") && value.length >= 2) {
      value = value.slice(1, -1);
    } else {
      value = value.replace(/\s+#.*$/, "");
    }
    vars.set(match[1], value);
  }
  return vars;
}

/** Where each unset variable is used: its name -> the paths (`a.b.0`) of the values using it. */
function unsetReferences(
  value: unknown,
  isSet: (name: string) => boolean,
  path: string[] = [],
  found = new Map<string, string[]>(),
): Map<string, string[]> {
  if (typeof value === "string") {
    for (const [, name] of value.matchAll(REQUIRED_REF)) {
      if (isSet(name)) continue;
      const paths = found.get(name) ?? [];
      paths.push(path.join("."));
      found.set(name, paths);
    }
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => unsetReferences(v, isSet, [...path, String(i)], found));
  } else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) unsetReferences(v, isSet, [...path, k], found);
  }
  return found;
}

/** A stand-in for an unset variable that keeps other values checkable (a URL where one is due). */
function standIn(name: string): string {
  if (/REDIS|STORE/.test(name) && name.endsWith("_URL")) return "redis://placeholder.invalid:6379";
  return name.endsWith("_URL") ? "https://placeholder.invalid" : `\${${name}}`;
}

/** Whether `path` is `prefix` or lies under it (dot paths), or the other way round. */
function related(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(prefix + ".") || prefix.startsWith(path + ".");
}

/**
 * Whether a problem of `parsePolicy` concerns a value that uses an unset variable. Problems read
 * `<path>: <text>`, or `<check> for <operations>: <field path>: <text>` for resolved options.
 */
function dependsOnUnset(problem: string, paths: string[]): boolean {
  const resolved = /^([a-z_]+) for .+?: (.*)$/s.exec(problem);
  if (resolved && !problem.startsWith(`${resolved[1]}.`)) {
    const [, check, rest] = resolved;
    const fields = paths.flatMap((p) => {
      const parts = p.split(".");
      if (!LEVELS.has(parts[0])) return [];
      const at = parts[0] === "defaults" ? 1 : 2;
      return parts[at] === check ? [parts.slice(at + 1).join(".")] : [];
    });
    if (fields.length === 0) return false;
    const field = /^([A-Za-z0-9_.]+): /.exec(rest)?.[1];
    // A cross-field rule of the check (no field path): it may rest on the unset value.
    return field === undefined || fields.some((f) => f === "" || related(field, f));
  }
  const at = /^([^\s:]+): /.exec(problem)?.[1];
  return at !== undefined && paths.some((p) => related(at, p));
}

/** The YAML syntax errors of `text`, each with its line, column and excerpt. */
function yamlErrors(text: string): string[] {
  return parseDocument(text).errors.map((error) => {
    const [first, ...excerpt] = error.message.split("\n");
    const where = error.linePos?.[0];
    const head = where
      ? `line ${where.line}, column ${where.col}: ${
        first.replace(/ at line \d+, column \d+:?$/, "")
      }`
      : first;
    const lines = excerpt.filter((l) => l.trim() !== "").map((l) => `      ${l}`);
    return [head, ...lines].join("\n");
  });
}

/** The positional arguments (the policy file first) and the `--env-file` of the arguments. */
function parseArgs(args: string[]): { positional: string[]; envFile?: string; bad: boolean } {
  const positional: string[] = [];
  let envFile: string | undefined;
  let bad = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--env-file") {
      envFile = args[++i];
      bad ||= envFile === undefined;
    } else if (arg.startsWith("--env-file=")) envFile = arg.slice("--env-file=".length);
    else positional.push(arg);
  }
  return { positional, envFile, bad };
}

/** The outcome of {@link checkPolicyFile}: the policy, or the exit code of a tool that stops. */
export type Checked =
  | { policy: Policy; positional: string[] }
  | { code: number; positional: string[] };

/**
 * What `policy:check` and `policy:explain` share: reads the policy file and the `--env-file` of
 * `args`, lists the unset variables, and validates the file as start-up does (`validatePolicy`:
 * every chain built, with the store's shape), leaving out the problems of values that use unset
 * variables. Prints every problem; the policy when there is none, else the exit code.
 */
export async function checkPolicyFile(
  args: string[],
  pipeline: Pipeline,
  options: {
    usage: string;
    /** Where the list of unset variables goes (policy:explain keeps stdout for its YAML). */
    say?: (line: string) => void;
  },
): Promise<Checked> {
  const { usage, say = console.log } = options;
  const { positional, envFile, bad } = parseArgs(args);
  const file = positional[0];
  if (!file || bad) {
    console.error(usage);
    return { code: 2, positional };
  }
  let fromFile = new Map<string, string>();
  let text: string;
  try {
    if (envFile) fromFile = parseEnvFile(await Deno.readTextFile(envFile), envFile);
    text = await Deno.readTextFile(file);
  } catch (error) {
    console.error((error as Error).message);
    return { code: 1, positional };
  }
  const env = (name: string) => fromFile.get(name) ?? Deno.env.get(name);

  const syntax = yamlErrors(text);
  if (syntax.length > 0) {
    console.error(`Policy file "${file}" is not valid YAML:`);
    for (const problem of syntax) console.error(`  - ${problem}`);
    return { code: 1, positional };
  }

  const unset = unsetReferences(
    parseDocument(text).toJS() ?? {},
    (name) => env(name) !== undefined,
  );
  if (unset.size > 0) {
    say(`${file}: environment variables not set (the values that use them are not checked):`);
    for (const [name, paths] of unset) say(`  - ${name} (${paths.join(", ")})`);
  }
  const paths = [...unset.values()].flat();
  await Promise.all([readPolicyFiles(text, env), loadX509For(text)]);
  try {
    const policy = await validatePolicy(file, text, { ...pipeline, env, placeholder: standIn });
    return { policy, positional };
  } catch (error) {
    if (!(error instanceof PolicyError)) throw error;
    const problems = error.problems.filter((p) => !dependsOnUnset(p, paths));
    if (problems.length === 0) {
      say(`${file}: valid apart from the values that use unset variables`);
      return { code: 0, positional };
    }
    console.error(new PolicyError(file, problems).message);
    return { code: 1, positional };
  }
}

/** Checks the policy file named in `args`; returns the exit code. */
export async function policyCheck(args: string[], pipeline: Pipeline): Promise<number> {
  // --probe: connect to the store and dependencies as start-up would (src/cli/policy_probe.ts).
  const probe = args.includes("--probe");
  const checked = await checkPolicyFile(args.filter((a) => a !== "--probe"), pipeline, {
    usage: USAGE,
  });
  if ("code" in checked) return checked.code;
  const { policy } = checked;
  console.log(`${policy.file}: valid (${policy.operations.length} operations)`);
  for (const warning of policyWarnings(policy)) console.log(`warning: ${warning}`);
  if (!probe) return 0;
  return await (await import("./policy_probe.ts")).probeDependencies(policy);
}
