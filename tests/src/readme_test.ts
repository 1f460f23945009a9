import assert from "node:assert/strict";
import { operationsTable } from "../../src/cli/operations_table.ts";
import { CHECKS, PIPELINE } from "../../middleware/mod.ts";

/** Table rows as trimmed cells (deno fmt pads cells and dashes). */
function cells(markdown: string | undefined): string[] {
  return (markdown ?? "").trim().split("\n").map((row) =>
    row.split("|").map((cell) => cell.trim().replace(/^-+$/, "-")).join("|")
  );
}

Deno.test("README starts with the two commands; docs/operations.md carries the current operations table", async () => {
  const readme = await Deno.readTextFile("README.md");
  const operations = await Deno.readTextFile("docs/operations.md");
  const start = readme.indexOf("deno task start");
  const test = readme.indexOf("deno task test");
  assert.ok(start > 0 && start < 800 && test > 0 && test < 800, "the two commands come first");
  const table = operations.split("<!-- operations:start -->")[1]?.split(
    "<!-- operations:end -->",
  )[0];
  assert.deepEqual(
    cells(table),
    cells(operationsTable()),
    "docs/operations.md table is stale: deno task docs:operations",
  );
});

Deno.test("README's list of checks names every check of middleware/mod.ts in the order they run, then the terminal proxy", async () => {
  const readme = await Deno.readTextFile("README.md");
  const section = readme.split("## The checks")[1].split("\n## ")[0];
  const listed = [...section.matchAll(/^- `([a-z_]+)`:/gm)].map((match) => match[1]);
  assert.deepEqual(listed, [...CHECKS.map((check) => check.key), PIPELINE.terminal.key]);
});

Deno.test("README's lines are at most 120 characters wide", async () => {
  const readme = await Deno.readTextFile("README.md");
  const wide = readme.split("\n").flatMap((line, index) =>
    [...line].length > 120 ? [`line ${index + 1}: ${[...line].length}`] : []
  );
  assert.deepEqual(wide, [], "rewrap these lines (a table too wide becomes a list)");
});

Deno.test("ARCHITECTURE.md lists every folder of src/ and only folders that exist", async () => {
  const page = await Deno.readTextFile("ARCHITECTURE.md");
  const table = page.split("## Folders and what each may import")[1].split("\n## ")[0];
  const listed = new Set([...table.matchAll(/`(src\/[a-z0-9_]+)\/`/g)].map((match) => match[1]));
  const present = new Set<string>();
  for (const entry of Deno.readDirSync("src")) {
    if (entry.isDirectory) present.add(`src/${entry.name}`);
  }
  assert.deepEqual([...listed].sort(), [...present].sort());
});

Deno.test("ARCHITECTURE.md's example check is middleware/psu_device_id.ts as it is, import paths and all", async () => {
  const page = await Deno.readTextFile("ARCHITECTURE.md");
  const section = page.split("## Adding a check")[1].split("\n## ")[0];
  const example = section.split("```ts ignore\n")[1]?.split("```")[0];
  assert.equal(example, await Deno.readTextFile("middleware/psu_device_id.ts"));
});

/** Every check key in the order the checks run, then the terminal handler's. */
const KEYS = [...CHECKS.map((check) => check.key), PIPELINE.terminal.key];

/**
 * The keys a doc's chain block names, in order: the first code block after `intro`, lines of
 * `label: key, key, ...` (the label optional), notes in parentheses aside.
 */
function chainOf(page: string, intro: string): string[] {
  const block = page.split(intro)[1]?.split("```\n")[1] ?? "";
  return block.split("\n").flatMap((line) =>
    line.replace(/^[^:]*:/, "").replace(/\([^)]*\)/g, "").split(",")
      .map((name) => name.trim()).filter((name) => name !== "")
  );
}

Deno.test("docs/rules.md and docs/request_hardening.md show the chain as middleware/mod.ts runs it", async () => {
  const rules = await Deno.readTextFile("docs/rules.md");
  const hardening = await Deno.readTextFile("docs/request_hardening.md");
  assert.deepEqual(chainOf(rules, "The chain, in order"), KEYS, "docs/rules.md");
  assert.deepEqual(chainOf(hardening, "Where the checks run"), KEYS, "docs/request_hardening.md");
});

Deno.test("docs/rules.md gives every check that refuses requests its rules, and names no other check", async () => {
  const rules = await Deno.readTextFile("docs/rules.md");
  const named = new Set<string>();
  for (const table of rules.split(/\n(?=\| Rule)/).slice(1)) {
    const rows = table.split("\n\n")[0].split("\n").filter((row) => row.startsWith("|"))
      .map((row) => row.split(/(?<!\\)\|/).map((cell) => cell.trim()));
    const column = rows[0].indexOf("Check");
    assert.ok(column > 0, `a table of rules without a Check column:\n${rows[0].join("|")}`);
    for (const row of rows.slice(2)) {
      for (const name of row[column].split(", ")) {
        if (/^\(.+\)$/.test(name)) continue; // (routing), (error handler): not checks
        assert.ok(KEYS.includes(name), `"${name}" in the Check column is not a check`);
        named.add(name);
      }
    }
  }
  const refuseNothing = rules.split("Checks that refuse nothing:")[1]?.split("\n\n")[0] ?? "";
  const quiet = [...refuseNothing.matchAll(/`([a-z_]+)`\s+\(/g)].map((match) => match[1]);
  for (const name of quiet) assert.ok(KEYS.includes(name), `"${name}" is not a check`);
  assert.deepEqual(
    KEYS.filter((key) => !named.has(key) && !quiet.includes(key)),
    [],
    "checks with neither a rule in docs/rules.md nor a place among the checks that refuse nothing",
  );
});

Deno.test("docs/request_hardening.md's sections of checks name checks only", async () => {
  const hardening = await Deno.readTextFile("docs/request_hardening.md");
  const headings = [...hardening.matchAll(/^### (.+)$/gm)].map((match) => match[1]);
  const names = headings.flatMap((heading) =>
    [...heading.matchAll(/`([a-z_]+)`/g)].map((match) => match[1])
  );
  assert.ok(names.length > 10, "the sections of checks were found");
  assert.deepEqual(names.filter((name) => !KEYS.includes(name)), []);
});
