// StrykerJS configuration of `deno task mutate` (tests/mutation/mutate.ts sets the environment):
// one source file under mutation, the command runner driving `deno test` over the test files that
// cover it. Stryker copies the project into a sandbox, instruments the one file there, and runs the
// command once per mutant with __STRYKER_ACTIVE_MUTANT__ set; Deno's `process.env` carries it to
// the instrumented module (a non-zero exit is a killed mutant).
import process from "node:process";

const file = process.env.MUTATE_FILE;
const tests = process.env.MUTATE_TESTS;
if (!file || !tests) throw new Error("Run through `deno task mutate`");

export default {
  $schema: "./node_modules/@stryker-mutator/core/schema/stryker-schema.json",
  testRunner: "command",
  // --fail-fast: a killed mutant stops at its first failing test. Most mutants fail one of the
  // first tests of a file, so they cost the start of a run instead of the whole run (a mutant of
  // middleware/idempotency.ts that the first test kills: 3 s instead of 20 s under load).
  commandRunner: { command: `deno test --allow-all --no-check --quiet --fail-fast ${tests}` },
  coverageAnalysis: "off",
  mutate: process.env.MUTATE_RANGES ? process.env.MUTATE_RANGES.split(" ") : [file],
  concurrency: Number(process.env.MUTATE_CONCURRENCY ?? 2),
  // The suite runs real servers: on a busy shared machine a test run may take twice its dry run.
  timeoutMS: 20_000,
  timeoutFactor: 2,
  dryRunTimeoutMinutes: 10,
  // Outside the project: `deno check tests/` would type-check the instrumented sandbox copies.
  tempDirName: process.env.MUTATE_TMP ?? "tests/mutation/.stryker-tmp",
  ignorePatterns: ["/bench", "/dist", "/.bench", "/.scratch", "/tests/mutation/reports"],
  symlinkNodeModules: false,
  disableTypeChecks: false,
  reporters: ["clear-text", "json", "progress"],
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true },
  jsonReporter: { fileName: process.env.MUTATE_REPORT ?? "tests/mutation/reports/mutation.json" },
  cleanTempDir: "always",
};
