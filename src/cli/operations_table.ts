/**
 * `deno task docs:operations`: prints the README's table of operations, generated from the
 * catalogue (a test fails when the README's copy differs).
 */
import { OPERATIONS } from "../psd2/catalogue.ts";
import { upstreamTemplate } from "../psd2/catalogue.ts";

/** The markdown table of every operation with its public and upstream paths. */
export function operationsTable(prefix = "/psd2/v1"): string {
  const rows = OPERATIONS.map((op) =>
    `| \`${op.id}\` | ${op.group} | ${op.method} | \`${op.path}\` | \`${
      upstreamTemplate(op, prefix)
    }\` | ${op.success.join(", ")} | ${op.required.join(", ") || "-"} | ${
      op.deprecated ? "deprecated" : ""
    } |`
  );
  return [
    "| operation | group | method | public path | upstream path (default) | success | required headers | note |",
    "|---|---|---|---|---|---|---|---|",
    ...rows,
  ].join("\n");
}

if (import.meta.main) console.log(operationsTable());
