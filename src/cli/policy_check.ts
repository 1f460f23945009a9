/**
 * `deno task policy:check <file>`: validates a policy file and lists every problem with its path
 * in the file; exits 0 only when the file is clean.
 */
import type { Pipeline } from "../core/chain.ts";
import { loadPolicy, PolicyError } from "../policy/load.ts";

/** Checks the policy file named in `args`; returns the exit code. */
export async function policyCheck(args: string[], pipeline: Pipeline): Promise<number> {
  const file = args[0];
  if (!file) {
    console.error("usage: deno task policy:check <policy file>");
    return 2;
  }
  const unset: string[] = [];
  /** A stand-in for an unset variable, so that a file can be checked without its secrets. */
  function placeholder(name: string): string {
    unset.push(name);
    if (/REDIS|STORE/.test(name) && name.endsWith("_URL")) {
      return "redis://placeholder.invalid:6379";
    }
    return name.endsWith("_URL") ? "https://placeholder.invalid" : `\${${name}}`;
  }
  try {
    const policy = await loadPolicy(file, { ...pipeline, placeholder });
    console.log(`${file}: valid (${policy.operations.length} operations)`);
    if (unset.length > 0) {
      console.log(`not set, checked with placeholders: ${[...new Set(unset)].join(", ")}`);
    }
    return 0;
  } catch (error) {
    if (!(error instanceof PolicyError)) throw error;
    console.error(error.message);
    return 1;
  }
}
