import assert from "node:assert/strict";
import { operationsTable } from "../../src/cli/operations_table.ts";

/** Table rows as trimmed cells (deno fmt pads cells and dashes). */
function cells(markdown: string | undefined): string[] {
  return (markdown ?? "").trim().split("\n").map((row) =>
    row.split("|").map((cell) => cell.trim().replace(/^-+$/, "-")).join("|")
  );
}

Deno.test("README starts with the two commands and carries the current operations table", async () => {
  const readme = await Deno.readTextFile("README.md");
  const start = readme.indexOf("deno task start");
  const test = readme.indexOf("deno task test");
  assert.ok(start > 0 && start < 800 && test > 0 && test < 800, "the two commands come first");
  const table = readme.split("<!-- operations:start -->")[1]?.split("<!-- operations:end -->")[0];
  assert.deepEqual(
    cells(table),
    cells(operationsTable()),
    "README operations table is stale: deno task docs:operations",
  );
});
