/**
 * What a start-up loads (the cold start of a scaled-out instance or a Deno Deploy isolate): the
 * modules main.ts and serve.ts import statically, read from `deno info --json`. Libraries only
 * some policies or requests need are imported dynamically when they do; bench/bench.ts's
 * cold-start row measures the time. jose: its key sets and error classes only (the checks that
 * build bearer-token chains need them synchronously), never its index (46 modules: JWE, key
 * generation, every signing flavour); signature and token verification, key import and policy
 * signatures load their part on first use (src/lib/lazy.ts).
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** Every module `entry` loads before it runs: its static imports, transitively. */
async function staticImports(entry: string): Promise<string[]> {
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
  return [...seen].map((s) => s.replace(`file://${ROOT}`, ""));
}

/** What a start-up with the default policy never needs, and why. */
const LATER: [RegExp, string][] = [
  [/@peculiar\/|reflect-metadata/, "certificates: with the first policy or request naming one"],
  [/src\/pki\/(certificate|crl|ocsp|revocation|qc_statement)\.ts$/, "certificate parsing"],
  [/@opentelemetry\//, "tracing: only with OTEL_DENO=true"],
  [/src\/upstream\/traced\.ts$/, "tracing: only with OTEL_DENO=true"],
  [/npm:\/?redis@|@redis\/|@upstash\//, "Redis and Upstash clients: only for their store"],
  [/src\/http\/openapi/, "the OpenAPI document: on request"],
  [/src\/cli\//, "the policy tools: only when run"],
  [/src\/sandbox\//, "the sandbox bank: never"],
];

for (const entry of ["main.ts", "serve.ts"]) {
  Deno.test(`${entry} loads at start-up only what every policy needs`, async () => {
    const loaded = await staticImports(entry);
    assert.ok(loaded.some((m) => m.startsWith("npm:/zod@")), "the graph was read");
    for (const [pattern, why] of LATER) {
      const found = loaded.filter((m) => pattern.test(m));
      assert.deepEqual(found, [], `${entry} imports statically what loads later (${why})`);
    }
  });
}

for (const entry of ["main.ts", "serve.ts"]) {
  Deno.test(`${entry} loads jose's key sets and errors at start-up, not its index`, async () => {
    const jose = (await staticImports(entry))
      .filter((m) => /^npm:\/?jose@/.test(m))
      .map((m) => m.replace(/^npm:\/?jose@[^/]+/, "jose"))
      .sort();
    assert.deepEqual(jose, ["jose/errors", "jose/jwks/local", "jose/jwks/remote"]);
  });
}
