/** JUnit XML of `policy:test`'s results, the report format CI systems read. */
import type { CaseResult } from "./policy_cases.ts";

/** Text escaped for XML attributes and content. */
function escaped(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** One `<testsuite>` per cases file, one `<testcase>` per case, a `<failure>` per missed case. */
export function junitXml(policyFile: string, results: readonly CaseResult[]): string {
  const byFile = Map.groupBy(results, (r) => r.file);
  const suites = [...byFile].map(([file, cases]) => {
    const failures = cases.filter((c) => c.misses.length > 0).length;
    const seconds = cases.reduce((sum, c) => sum + c.ms, 0) / 1000;
    const body = cases.map((c) => {
      const open = `    <testcase classname="${escaped(file)}" name="${escaped(c.name)}" time="${
        c.ms / 1000
      }"`;
      if (c.misses.length === 0) return `${open}/>`;
      const message = escaped(c.misses[0]);
      return `${open}>\n      <failure message="${message}">${
        escaped(c.misses.join("\n"))
      }</failure>\n    </testcase>`;
    });
    return [
      `  <testsuite name="${
        escaped(`${policyFile} with ${file}`)
      }" tests="${cases.length}" failures="${failures}" errors="0" time="${seconds}">`,
      ...body,
      "  </testsuite>",
    ].join("\n");
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n${
    suites.join("\n")
  }\n</testsuites>\n`;
}
