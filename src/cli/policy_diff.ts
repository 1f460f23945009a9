/**
 * `deno task policy:diff [--env-file <file>] <old policy> <new policy>` and
 * `deno task policy:diff [--env-file <file>] --git <rev> <policy>`: what a change of the policy
 * does, per operation, in words a reviewer reads in a pull request: checks switched on or off,
 * modes changed, options changed (after defaults, group and operation overrides: the effective
 * chains of `policy:explain`, secrets redacted), routes and sections changed. Each change is one
 * line naming the operations it touches (every operation, whole groups, else operation ids). Exits 0 when nothing changes, 1 when something does (as
 * `diff` does), 2 when a file cannot be read or parsed.
 */
import { parsePolicy, type Policy, PolicyError } from "../policy/load.ts";
import type { Pipeline } from "../core/chain.ts";
import { readPolicyFiles } from "../lib/policy_files.ts";
import { loadX509For } from "../pki/x509.ts";
import { explain, redacted } from "./policy_explain.ts";
import { parseEnvFile } from "./policy_check.ts";
import { durationWriter } from "./policy_durations.ts";

const USAGE =
  "usage: deno task policy:diff [--env-file <file>] <old policy> <new policy>\n       deno task policy:diff [--env-file <file>] --git <rev> <policy>";

/** One check's place in an explained chain. */
interface Link {
  check: string;
  mode: string;
  options?: Record<string, unknown>;
}

const OFF = new Set(["off", "not applicable to this operation"]);

/** How a leaf is printed: its JSON text, a duration with its unit (`24h`, not `86400000`). */
type Show = (path: string, value: unknown) => string;

/** A leaf shower for a policy of these checks. */
function showerFor(pipeline: Pipeline): Show {
  const write = durationWriter(pipeline);
  return (path, value) =>
    (typeof value === "number" ? write(path, value) : undefined) ?? JSON.stringify(value);
}

/** Every leaf of a value as `a.b.0` -> its printed text (`prefix.a.b.0` given to `show`). */
function leaves(
  value: unknown,
  show: Show,
  prefix: string,
  path = "",
  out = new Map<string, string>(),
) {
  if (value && typeof value === "object" && Object.keys(value).length > 0) {
    for (const [key, item] of Object.entries(value)) {
      leaves(item, show, prefix, path ? `${path}.${key}` : key, out);
    }
  } else out.set(path, show(path ? `${prefix}.${path}` : prefix, value));
  return out;
}

/** The changes between two sets of leaves, as sentences about `prefix`. */
function changedLeaves(prefix: string, before: unknown, after: unknown, show: Show): string[] {
  const a = leaves(before, show, prefix);
  const b = leaves(after, show, prefix);
  const out: string[] = [];
  for (const [path, value] of a) {
    const name = path ? `${prefix}.${path}` : prefix;
    if (!b.has(path)) out.push(`${name}: ${value} removed`);
    else if (b.get(path) !== value) out.push(`${name}: ${value} -> ${b.get(path)}`);
  }
  for (const [path, value] of b) {
    if (!a.has(path)) out.push(`${path ? `${prefix}.${path}` : prefix}: ${value} added`);
  }
  return out;
}

/** The changes of one operation's chain, in check order. */
function chainChanges(before: Link[], after: Link[], show: Show): string[] {
  const out: string[] = [];
  const old = new Map(before.map((l) => [l.check, l]));
  for (const link of after) {
    const was = old.get(link.check);
    if (!was) {
      out.push(`${link.check}: new check (${link.mode})`);
      continue;
    }
    const on = !OFF.has(link.mode);
    const wasOn = !OFF.has(was.mode);
    if (on && !wasOn) out.push(`${link.check}: switched on (${link.mode})`);
    else if (!on && wasOn) out.push(`${link.check}: switched off (was ${was.mode})`);
    else if (link.mode !== was.mode) out.push(`${link.check}: mode ${was.mode} -> ${link.mode}`);
    if (on && wasOn) out.push(...changedLeaves(link.check, was.options, link.options, show));
  }
  for (const link of before) {
    if (!after.some((l) => l.check === link.check)) out.push(`${link.check}: check removed`);
  }
  return out;
}

/** The policy's sections (everything but the check levels), secrets redacted. */
function sections(policy: Policy): Record<string, unknown> {
  const { file: _f, checks: _c, terminal: _t, operations: _o, ...rest } = policy;
  return redacted(rest) as Record<string, unknown>;
}

/**
 * Operations as a reviewer thinks of them: every operation, whole groups by name (the policy's
 * `groups.<group>`), else the operation ids.
 */
function named(ids: string[], policy: Policy): string {
  const all = policy.operations.map((r) => r.operation);
  if (ids.length === all.length) return `every operation (${ids.length})`;
  const byGroup = Map.groupBy(all, (op) => op.group);
  const wanted = new Set(ids);
  const groups = [...byGroup].filter(([, ops]) => ops.every((op) => wanted.has(op.id)));
  const inGroups = new Set(groups.flatMap(([, ops]) => ops.map((op) => op.id)));
  const parts = [
    ...groups.map(([group, ops]) => `group ${group} (${ops.length})`),
    ...ids.filter((id) => !inGroups.has(id)),
  ];
  return parts.join(", ");
}

/** What changes from `before` to `after`, as lines a reviewer reads; empty when nothing does. */
export function policyChanges(before: Policy, after: Policy): string[] {
  const a = explain(before) as Record<string, { route: string; chain: Link[] }>;
  const b = explain(after) as Record<string, { route: string; chain: Link[] }>;
  const show = showerFor(after);
  // Each change once, with the operations it touches: a change of the defaults is one line.
  const byChange = new Map<string, string[]>();
  for (const id of Object.keys(b)) {
    const changes = [
      ...(a[id]?.route !== b[id].route ? [`route: ${a[id]?.route} -> ${b[id].route}`] : []),
      ...chainChanges(a[id]?.chain ?? [], b[id].chain, show),
    ];
    for (const change of changes) byChange.set(change, [...(byChange.get(change) ?? []), id]);
  }
  const before_ = sections(before);
  const after_ = sections(after);
  const lines = Object.keys({ ...before_, ...after_ }).flatMap((name) =>
    changedLeaves(name, before_[name], after_[name], show)
  ).map((change) => `- ${change} (section: every operation)`);
  for (const [change, ids] of byChange) lines.push(`- ${change} (on ${named(ids, after)})`);
  const touched = new Set([...byChange.values()].flat()).size;
  if (lines.length > 0) {
    lines.push(`\n${touched} of ${Object.keys(b).length} operations change.`);
  }
  return lines;
}

/** A value for a `${NAME}` that is not set, so that a diff needs no secrets. */
function standIn(name: string): string {
  if (/REDIS|STORE/.test(name) && name.endsWith("_URL")) return "redis://placeholder.invalid:6379";
  return name.endsWith("_URL") ? "https://placeholder.invalid" : `\${${name}}`;
}

/** Parses one policy text as start-up does, unset variables given stand-ins. */
async function parsed(
  file: string,
  text: string,
  pipeline: Pipeline,
  env: (name: string) => string | undefined,
): Promise<Policy> {
  await Promise.all([readPolicyFiles(text, env), loadX509For(text)]);
  return parsePolicy(file, text, { ...pipeline, env, placeholder: standIn });
}

/** The text of `path` as committed in `rev` (`git show <rev>:./<path>`). */
async function committed(rev: string, path: string): Promise<string> {
  const out = await new Deno.Command("git", {
    args: ["show", `${rev}:./${path.replace(/^\.\//, "")}`],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new PolicyError(`${rev}:${path}`, [new TextDecoder().decode(out.stderr).trim()]);
  }
  return new TextDecoder().decode(out.stdout);
}

/** Prints what changes between two policies; returns the exit code. */
export async function policyDiff(args: string[], pipeline: Pipeline): Promise<number> {
  const rest = [...args];
  const take = (flag: string) => {
    const at = rest.indexOf(flag);
    return at < 0 ? undefined : rest.splice(at, 2)[1] ?? "";
  };
  const envFile = take("--env-file");
  const rev = take("--git");
  if (envFile === "" || rev === "" || rest.length !== (rev === undefined ? 2 : 1)) {
    console.error(USAGE);
    return 2;
  }
  try {
    const vars = envFile ? parseEnvFile(await Deno.readTextFile(envFile), envFile) : new Map();
    const env = (name: string) => vars.get(name) ?? Deno.env.get(name);
    const newFile = rest[rest.length - 1];
    const oldFile = rev === undefined ? rest[0] : `${rev}:${newFile}`;
    const oldText = rev === undefined
      ? await Deno.readTextFile(oldFile)
      : await committed(rev, newFile);
    // One at a time: the policy files a text names are read ahead for that text.
    const before = await parsed(oldFile, oldText, pipeline, env);
    const after = await parsed(newFile, await Deno.readTextFile(newFile), pipeline, env);
    const lines = policyChanges(before, after);
    if (lines.length === 0) {
      console.log(`No change in behaviour from ${oldFile} to ${newFile}`);
      return 0;
    }
    console.log(`What changes from ${oldFile} to ${newFile}:\n`);
    console.log(lines.join("\n"));
    return 1;
  } catch (error) {
    if (error instanceof PolicyError || error instanceof Deno.errors.NotFound) {
      console.error(error.message);
      return 2;
    }
    throw error;
  }
}
