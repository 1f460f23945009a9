/**
 * jose at start-up: a gateway starts with jose's key sets and error classes only (the checks that
 * build bearer-token chains need them synchronously), never its index (46 modules: JWE, key
 * generation, every signing flavour). Signature verification, token verification, key import
 * and policy signatures load their part of jose on first use (src/lib/lazy.ts).
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** The jose entry points `entry` reaches through static imports (`deno info --json`). */
async function staticJose(entry: string): Promise<string[]> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", entry],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(code, 0, new TextDecoder().decode(stderr));
  const graph = JSON.parse(new TextDecoder().decode(stdout)) as {
    roots: string[];
    redirects?: Record<string, string>;
    modules: {
      specifier: string;
      dependencies?: { code?: { specifier: string }; isDynamic?: boolean }[];
    }[];
  };
  const modules = new Map(graph.modules.map((m) => [m.specifier, m]));
  const seen = new Set<string>();
  const next = [...graph.roots];
  while (next.length > 0) {
    const specifier = next.pop()!;
    const resolved = graph.redirects?.[specifier] ?? specifier;
    if (seen.has(resolved)) continue;
    seen.add(resolved);
    for (const dependency of modules.get(resolved)?.dependencies ?? []) {
      if (dependency.code && !dependency.isDynamic) next.push(dependency.code.specifier);
    }
  }
  return [...seen].filter((s) => /^npm:\/?jose@/.test(s)).map((s) =>
    s.replace(/^npm:\/?jose@[^/]+/, "jose")
  ).sort();
}

for (const entry of ["main.ts", "serve.ts"]) {
  Deno.test(`${entry} loads jose's key sets and errors at start-up, not its index`, async () => {
    assert.deepEqual(await staticJose(entry), [
      "jose/errors",
      "jose/jwks/local",
      "jose/jwks/remote",
    ]);
  });
}
