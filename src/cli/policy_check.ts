/**
 * `deno task policy:check <file>`: validates a policy file and lists every problem with its path
 * in the file; exits 0 only when the file is clean.
 */
import { loadPolicy, PolicyError } from "../policy.ts";

const file = Deno.args[0];
if (!file) {
  console.error("usage: deno task policy:check <policy file>");
  Deno.exit(2);
}
/** A stand-in for an unset variable, so that a file can be checked without its secrets. */
function placeholder(name: string): string {
  unset.push(name);
  if (/REDIS|STORE/.test(name) && name.endsWith("_URL")) return "redis://placeholder.invalid:6379";
  return name.endsWith("_URL") ? "https://placeholder.invalid" : `\${${name}}`;
}

const unset: string[] = [];
try {
  const policy = await loadPolicy(file, { placeholder });
  console.log(`${file}: valid (${policy.operations.length} operations)`);
  if (unset.length > 0) {
    console.log(`not set, checked with placeholders: ${[...new Set(unset)].join(", ")}`);
  }
} catch (error) {
  if (!(error instanceof PolicyError)) throw error;
  console.error(error.message);
  Deno.exit(1);
}
