/**
 * The import rules of ARCHITECTURE.md, read from the module graph `deno info --json` gives for
 * every gateway file (type-only imports included): each import is one the page's table "Folders
 * and what each may import" allows, no two folders import each other (directly or through others),
 * no file cycle, no gateway file imports the sandbox bank, and the domain libraries do without Hono.
 *
 * The table is this test's data: the test parses the Markdown table itself, so there is one source
 * and it is the page a maintainer reads and edits. (A table generated from a list kept here would
 * need a generator step and a second test holding the page to it, and the list would be a second
 * source a reviewer might not look at.) A row names folders (`src/pki/`) or files (`main.ts`); a
 * file takes the most specific row that matches it and may import its own folder and what that
 * row's last cell names in backticks, or anything when the cell says so.
 */
import assert from "node:assert/strict";
import { relative } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";

const ROOT = fromFileUrl(new URL("../", import.meta.url));
/** Folders of libraries that know nothing of HTTP frameworks. */
const DOMAIN = [
  "src/lib/",
  "src/psd2/",
  "src/sections/",
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

/** The strongly connected components with more than one node, or a node importing itself. */
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

/** One row of the table: the folders or files it covers, and what they may import. */
interface Row {
  keys: string[];
  /** Folders (ending in `/`) and files a covered file may import; `"anything"` for no limit. */
  mayImport: string[] | "anything";
}

/** The rows of the first table in ARCHITECTURE.md's section "Folders and what each may import". */
function layerTable(page: string): Row[] {
  const section = page.split("## Folders and what each may import")[1]?.split("\n## ")[0] ?? "";
  const lines = section.split("\n").filter((line) => line.startsWith("|"));
  const ticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]);
  return lines.slice(2).map((line) => {
    const cells = line.split("|").slice(1, -1).map((cell) => cell.trim());
    assert.equal(cells.length, 3, `a row has three cells: ${line}`);
    const mayImport = cells[2] === "anything" ? "anything" : ticked(cells[2]);
    return { keys: ticked(cells[0]), mayImport };
  });
}

/** Whether `path` is `key` (a file) or lies under it (a folder). */
function covers(key: string, path: string): boolean {
  return key.endsWith("/") ? path.startsWith(key) : path === key;
}

/** The most specific key of the table that covers `path`, with its row. */
function rowOf(rows: Row[], path: string): { key: string; row: Row } | undefined {
  let best: { key: string; row: Row } | undefined;
  for (const row of rows) {
    for (const key of row.keys) {
      if (covers(key, path) && key.length > (best?.key.length ?? -1)) best = { key, row };
    }
  }
  return best;
}

/** Every import of a project file that the table does not allow, as "a -> b". */
function forbidden(rows: Row[], edges: Map<string, Set<string>>): string[] {
  const out: string[] = [];
  for (const [file, targets] of edges) {
    const own = rowOf(rows, file);
    for (const target of targets) {
      if (!edges.has(target)) continue; // npm:, node:, jsr:
      const allowed = own !== undefined &&
        (own.row.mayImport === "anything" || covers(own.key, target) ||
          own.row.mayImport.some((entry) => covers(entry, target)));
      if (!allowed) out.push(`${file} -> ${target}`);
    }
  }
  return out.sort();
}

/** The folder a file belongs to for the folder rules: `src/<name>/`, `middleware/`, or the file. */
function folderOf(path: string): string {
  const parts = path.split("/");
  if (parts.length === 1) return path;
  return parts[0] === "src" ? `src/${parts[1]}/` : `${parts[0]}/`;
}

/** The graph of folders: an edge wherever a file of one imports a file of another. */
function folderGraph(edges: Map<string, Set<string>>): Map<string, Set<string>> {
  const folders = new Map<string, Set<string>>();
  for (const file of edges.keys()) folders.set(folderOf(file), new Set());
  for (const [file, targets] of edges) {
    for (const target of targets) {
      if (!edges.has(target) || folderOf(target) === folderOf(file)) continue;
      folders.get(folderOf(file))!.add(folderOf(target));
    }
  }
  return folders;
}

/**
 * The table's own graph: a row's keys -> the keys of the rows whose files it may import. A row that
 * may import anything (a separate program, the tests) counts as importing every row with limits.
 */
function tableGraph(rows: Row[]): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  const name = (row: Row) => row.keys.join(", ");
  for (const row of rows) graph.set(name(row), new Set());
  for (const row of rows) {
    const targets = row.mayImport === "anything"
      ? rows.filter((other) => other.mayImport !== "anything")
      : row.mayImport.flatMap((entry) => {
        const target = rowOf(rows, entry.endsWith("/") ? `${entry}x.ts` : entry)?.row;
        return target && target !== row ? [target] : [];
      });
    for (const target of targets) graph.get(name(row))!.add(name(target));
  }
  return graph;
}

/** Every entry of a row with limits that names the files of a row above it, as "row -> entry". */
function upward(rows: Row[]): string[] {
  const out: string[] = [];
  rows.forEach((row, at) => {
    if (row.mayImport === "anything") return;
    for (const entry of row.mayImport) {
      const target = rowOf(rows, entry.endsWith("/") ? `${entry}x.ts` : entry)?.row;
      if (target !== undefined && rows.indexOf(target) < at) out.push(`${row.keys[0]} -> ${entry}`);
    }
  });
  return out;
}

const gatewayFiles = ["main.ts", "serve.ts", ...filesUnder("src"), ...filesUnder("middleware")];
const graph = await importGraph(gatewayFiles);
const table = layerTable(await Deno.readTextFile(`${ROOT}ARCHITECTURE.md`));

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

Deno.test("architecture: ARCHITECTURE.md's table has a row for every gateway file", () => {
  assert.ok(table.length >= 10, "the table is found and read");
  assert.deepEqual(gatewayFiles.filter((file) => rowOf(table, file) === undefined), []);
});

Deno.test("architecture: the table names only folders and files that exist", () => {
  const named = table.flatMap((row) => [
    ...row.keys,
    ...(row.mayImport === "anything" ? [] : row.mayImport),
  ]);
  const missing = named.filter((path) => {
    try {
      const info = Deno.statSync(ROOT + path);
      return path.endsWith("/") ? !info.isDirectory : !info.isFile;
    } catch {
      return true;
    }
  });
  assert.deepEqual(missing, []);
});

Deno.test("architecture: every import is one ARCHITECTURE.md's table allows", () => {
  assert.deepEqual(forbidden(table, graph), []);
});

Deno.test("architecture: the table lets no two folders import each other", () => {
  assert.deepEqual(cycles(tableGraph(table)), []);
});

Deno.test("architecture: a row of the table names only rows below it (anything aside)", () => {
  assert.deepEqual(upward(table), []);
});

Deno.test("architecture: no two folders import each other, directly or through others", () => {
  assert.deepEqual(cycles(folderGraph(graph)), []);
});

Deno.test("architecture: no file cycle, type-only imports included", () => {
  assert.deepEqual(cycles(graph), []);
});

Deno.test("architecture: no file under src/ imports middleware/", () => {
  const found = imports(
    (file) => file.startsWith("src/") && !isSandbox(file),
    (target) => target.startsWith("middleware/"),
  );
  assert.deepEqual(found, []);
});

Deno.test("architecture: no gateway file imports the sandbox bank", () => {
  assert.deepEqual(imports((file) => !isSandbox(file), isSandbox), []);
});

Deno.test("architecture: the libraries do not import Hono or the request kernel", () => {
  const found = imports(
    (file) => DOMAIN.some((dir) => file.startsWith(dir)),
    (target) =>
      target.startsWith("npm:hono") || target.startsWith("src/core/") ||
      target.startsWith("src/http/"),
  );
  assert.deepEqual(found, []);
});

Deno.test("architecture: the rules find what they look for", () => {
  const edges = new Map([["a", new Set(["b"])], ["b", new Set(["a"])], ["c", new Set(["c"])]]);
  assert.deepEqual(cycles(edges).sort(), [["a", "b"], ["c"]]);
  assert.ok(graph.get("main.ts")!.has("middleware/mod.ts"), "main.ts imports the checks");
  const rows: Row[] = [
    { keys: ["src/a/"], mayImport: ["src/b/x.ts"] },
    { keys: ["src/b/"], mayImport: ["src/a/"] },
    { keys: ["src/a/special.ts"], mayImport: "anything" },
  ];
  const files = new Map([
    ["src/a/one.ts", new Set(["src/a/two.ts", "src/b/x.ts", "src/b/y.ts", "npm:zod"])],
    ["src/a/two.ts", new Set<string>()],
    ["src/a/special.ts", new Set(["src/b/y.ts"])],
    ["src/b/x.ts", new Set(["src/a/two.ts"])],
    ["src/b/y.ts", new Set<string>()],
  ]);
  assert.deepEqual(forbidden(rows, files), ["src/a/one.ts -> src/b/y.ts"]);
  assert.deepEqual(cycles(folderGraph(files)), [["src/a/", "src/b/"]]);
  assert.deepEqual(cycles(tableGraph(rows.slice(0, 2))), [["src/a/", "src/b/"]]);
  assert.deepEqual(upward(rows), ["src/b/ -> src/a/"]);
  assert.deepEqual(
    layerTable(
      "## Folders and what each may import\n\n| f | h | m |\n| - | - | - |\n" +
        "| `src/a/`, `b.ts` | x | `src/lib/`, `c.ts` |\n| `t/` | y | anything |\n\n## Next",
    ),
    [{ keys: ["src/a/", "b.ts"], mayImport: ["src/lib/", "c.ts"] }, {
      keys: ["t/"],
      mayImport: "anything",
    }],
  );
});
