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
try {
  const policy = await loadPolicy(file, {
    // Addresses and secrets need not be set to check a file's shape.
    env: (name) =>
      Deno.env.get(name) ?? (name.endsWith("_URL") ? "http://127.0.0.1:1" : `\${${name}}`),
  });
  console.log(`${file}: valid (${policy.operations.length} operations)`);
} catch (error) {
  if (!(error instanceof PolicyError)) throw error;
  console.error(error.message);
  Deno.exit(1);
}
