/**
 * The import rules of ARCHITECTURE.md, read from the module graph `deno info --json` gives for
 * every gateway file (type-only imports included): imports run one way (entry points -> assembly ->
 * `middleware/` -> `src/` libraries), nothing forms a cycle, no gateway file imports the sandbox
 * bank, and the domain libraries do without Hono.
 */
import assert from "node:assert/strict";
import { relative } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";

const ROOT = fromFileUrl(new URL("../", import.meta.url));
/** Folders of libraries that know nothing of HTTP frameworks or requests in flight. */
const DOMAIN = [
  "src/lib/",
  "src/pki/",
  "src/signing/",
  "src/tokens/",
  "src/bodies/",
  "src/store/",
  "src/upstream/",
];

/** Every `.ts` file under `dir`, relative to the root. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of Deno.readDirSync(ROOT + dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) out.push(...filesUnder(path));
    else if (entry.name.endsWith(".ts")) out.push(path);
  }
  return out;
}

/** Each module of the graph (relative path, or the specifier outside the project) -> its imports. */
async function importGraph(files: string[]): Promise<Map<string, Set<string>>> {
  const entry = await Deno.makeTempFile({ suffix: ".ts" });
  try {
    await Deno.writeTextFile(
      entry,
      files.map((file) => `import "${new URL(file, `file://${ROOT}`).href}";\n`).join(""),
    );
    const info = new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", entry],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    });
    const { code, stdout, stderr } = await info.output();
    assert.equal(code, 0, new TextDecoder().decode(stderr));
    const graph = JSON.parse(new TextDecoder().decode(stdout)) as {
      modules: {
        specifier: string;
        dependencies?: { code?: { specifier: string }; type?: { specifier: string } }[];
      }[];
    };
    const name = (specifier: string) =>
      specifier.startsWith("file://") ? relative(ROOT, fromFileUrl(specifier)) : specifier;
    const edges = new Map<string, Set<string>>();
    for (const module of graph.modules) {
      if (!module.specifier.startsWith(`file://${ROOT}`)) continue;
      const targets = new Set<string>();
      for (const dependency of module.dependencies ?? []) {
        for (const target of [dependency.code?.specifier, dependency.type?.specifier]) {
          if (target) targets.add(name(target));
        }
      }
      edges.set(name(module.specifier), targets);
    }
    return edges;
  } finally {
    await Deno.remove(entry);
  }
}

/** The strongly connected components with more than one module, or a module importing itself. */
function cycles(edges: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  function visit(node: string) {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const target of edges.get(node) ?? []) {
      if (!edges.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || edges.get(node)!.has(node)) found.push(component.sort());
  }
  for (const node of edges.keys()) if (!index.has(node)) visit(node);
  return found;
}

const gatewayFiles = ["main.ts", "serve.ts", ...filesUnder("src"), ...filesUnder("middleware")];
const graph = await importGraph(gatewayFiles);

/** Every import of a file matching `from` into a module matching `to`, as "a -> b". */
function imports(from: (file: string) => boolean, to: (target: string) => boolean): string[] {
  const out: string[] = [];
  for (const [file, targets] of graph) {
    if (!from(file)) continue;
    for (const target of targets) if (to(target)) out.push(`${file} -> ${target}`);
  }
  return out;
}

const isSandbox = (file: string) => file.startsWith("src/sandbox/");

Deno.test("architecture: the graph covers every gateway file", () => {
  for (const file of gatewayFiles) assert.ok(graph.has(file), `${file} is not in the graph`);
});

Deno.test("architecture: no file under src/ imports middleware/", () => {
  const found = imports(
    (file) => file.startsWith("src/") && !isSandbox(file),
    (target) => target.startsWith("middleware/"),
  );
  assert.deepEqual(found, []);
});

Deno.test("architecture: no import cycle, type-only imports included", () => {
  assert.deepEqual(cycles(graph), []);
});

Deno.test("architecture: no gateway file imports the sandbox bank", () => {
  assert.deepEqual(imports((file) => !isSandbox(file), isSandbox), []);
});

Deno.test("architecture: the domain libraries do not import Hono or the request kernel", () => {
  const found = imports(
    (file) => DOMAIN.some((dir) => file.startsWith(dir)),
    (target) =>
      target.startsWith("npm:hono") || target.startsWith("src/core/check.ts") ||
      target.startsWith("src/core/request.ts") || target.startsWith("src/http/"),
  );
  assert.deepEqual(found, []);
});

Deno.test("architecture: cycles() and imports() find what they look for", () => {
  const edges = new Map([["a", new Set(["b"])], ["b", new Set(["a"])], ["c", new Set(["c"])]]);
  assert.deepEqual(cycles(edges).sort(), [["a", "b"], ["c"]]);
  assert.ok(graph.get("main.ts")!.has("middleware/mod.ts"), "main.ts imports the checks");
});
