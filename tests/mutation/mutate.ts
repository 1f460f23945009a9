/**
 * `deno task mutate [files...]`: mutation testing with StrykerJS, one source file at a time, each
 * against the test files that cover it ({@link testsFor}). Without files: the gateway's source files
 * changed since the branch left main (committed or not). Installs StrykerJS into
 * tests/mutation/stryker/node_modules on first use (npm ci, Node 20), starts one redis-server for the
 * runs, and prints the score of each file and every surviving mutant.
 *
 *   deno task mutate middleware/links.ts src/signing/digest.ts
 *   MUTATE_CONCURRENCY=1 deno task mutate middleware/rate_limit.ts
 *   deno task mutate middleware/links.ts:29-35 middleware/links.ts:70   # only the mutants on these lines
 *   deno task mutate middleware/links.ts:survivors     # again, the lines of the stored survivors
 */
import { existsSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startRedisServer } from "../support/redis.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
/** StrykerJS's npm manifest, lock, configuration and node_modules. */
const STRYKER = join(ROOT, "tests/mutation/stryker");
const REPORTS = join(ROOT, "tests/mutation/reports");

/**
 * Tests that cover a source file beyond its mirror (tests/<path>_test.ts) and the test files that
 * import it: the checks' own tests for the libraries they use, and the end-to-end files of a check
 * that is easier to drive through the whole gateway.
 */
export const COVERED_BY: Record<string, string[]> = {
  "src/signing/jws.ts": [
    "tests/middleware/jws_signature_test.ts",
    "tests/middleware/_signature_test.ts",
  ],
  "src/signing/http_signature.ts": [
    "tests/middleware/http_signature_test.ts",
    "tests/middleware/_signature_test.ts",
    "tests/security/signature_standard_form_test.ts",
  ],
  "src/signing/signer.ts": [
    "tests/middleware/jws_signature_test.ts",
    "tests/middleware/http_signature_test.ts",
    "tests/middleware/_signature_test.ts",
  ],
  "src/signing/verifier.ts": [
    "tests/middleware/_signature_test.ts",
    "tests/middleware/jws_signature_test.ts",
    "tests/middleware/http_signature_test.ts",
  ],
  "src/signing/key_id.ts": ["tests/security/signature_standard_form_test.ts"],
  "src/signing/digest.ts": ["tests/middleware/digest_test.ts"],
  // The memory store's ids used in unique mode, tested through the store's public API.
  "src/store/seen_ids.ts": [
    "tests/src/store/memory_test.ts",
    "tests/security/store_shares_test.ts",
  ],
  "src/pki/certificate.ts": [
    "tests/middleware/tpp_certificate_test.ts",
    "tests/middleware/jws_signature_test.ts",
    "tests/middleware/_signature_test.ts",
  ],
  "src/pki/trust.ts": [
    "tests/middleware/tpp_certificate_test.ts",
    "tests/middleware/jws_signature_test.ts",
    "tests/middleware/http_signature_test.ts",
    "tests/middleware/_signature_test.ts",
  ],
  "src/pki/client_cert.ts": ["tests/middleware/tpp_certificate_test.ts"],
  // The guard's register and revocation branches, driven through the checks that use them.
  "src/pki/certificate_use.ts": [
    "tests/middleware/tpp_certificate_test.ts",
    "tests/security/trust_register_test.ts",
  ],
  // The transport certificate's TPP is what a signer must match; the terminator rules (who may
  // send the header) are attacks in tests/security.
  "middleware/tpp_certificate.ts": [
    "tests/middleware/_signature_test.ts",
    "tests/middleware/jws_signature_test.ts",
    "tests/middleware/tpp_certificate_log_test.ts",
    "tests/security/who_is_calling_test.ts",
  ],
  // mut_ocsp: the register's attacks (src/pki/ocsp.ts has a unit mirror that builds every answer).
  "src/pki/register.ts": ["tests/security/trust_register_test.ts"],
  "src/tokens/jwks.ts": [
    "tests/middleware/bearer_token_test.ts",
    "tests/security/token_key_rotation_test.ts",
  ],
  "middleware/_signature.ts": [
    "tests/middleware/jws_signature_test.ts",
    "tests/middleware/http_signature_test.ts",
  ],
  "middleware/_shared_state.ts": [
    "tests/middleware/idempotency_test.ts",
    "tests/middleware/rate_limit_test.ts",
    "tests/middleware/consent_frequency_test.ts",
    "tests/security/shared_state_store_verdicts_test.ts",
  ],
  "middleware/links.ts": [
    "tests/middleware/proxy_test.ts",
    "tests/security/upstream_answer_headers_test.ts",
    "tests/security/upstream_answer_links_test.ts",
    "tests/security/upstream_answer_location_test.ts",
  ],
  "src/store/script.ts": ["tests/src/store/redis_test.ts", "tests/src/store/upstash_test.ts"],
  // idempotency (mut_idem): the fault tests, the replay attacks (callers without TPP identity),
  // and the store's verdicts it must not take for "go".
  "middleware/idempotency.ts": [
    "tests/faults/idempotency_faults_test.ts",
    "tests/security/identifiers_case_test.ts",
    "tests/security/shared_state_replay_test.ts",
    "tests/security/shared_state_store_verdicts_test.ts",
  ],
  "middleware/rate_limit.ts": [
    "tests/security/identifiers_case_test.ts",
    "tests/security/shared_state_psu_limit_test.ts",
    "tests/security/shared_state_store_verdicts_test.ts",
    "tests/security/who_is_calling_test.ts",
  ],
  "middleware/consent_frequency.ts": [
    "tests/middleware/consent_frequency_cards_test.ts",
    "tests/security/card_accounts_test.ts",
    "tests/security/identifiers_case_test.ts",
    "tests/security/shared_state_consent_frequency_test.ts",
    "tests/security/shared_state_store_verdicts_test.ts",
  ],
  // The store scripts run inside redis-server: the store contract against a real one.
  "src/store/lua/decide.ts": ["tests/src/store/redis_test.ts"],
  "src/store/lua/write.ts": ["tests/src/store/redis_test.ts"],
  "src/store/lua/refund.ts": ["tests/src/store/redis_test.ts"],
  // Revocation (src/pki/revocation_policy.ts, crl.ts, revocation.ts): the checker's tests and the
  // attacks with revoked certificates through the gateway.
  "src/pki/revocation_policy.ts": [
    "tests/security/trust_revocation_test.ts",
    "tests/src/pki/revocation_test.ts",
  ],
  "src/pki/crl.ts": ["tests/src/pki/revocation_test.ts"],
  "src/pki/revocation.ts": ["tests/security/trust_revocation_test.ts"],
  // The header rules that drop an ignorable header, and those that need a header.
  "middleware/_headers.ts": [
    "tests/middleware/tpp_flags_test.ts",
    "tests/middleware/tpp_redirect_uri_test.ts",
    "tests/middleware/tpp_notification_content_test.ts",
    "tests/middleware/header_limits_test.ts",
    "tests/middleware/request_id_test.ts",
  ],
  // Bearer tokens: the introspection client as bearer_token drives it.
  "src/tokens/introspection.ts": ["tests/middleware/bearer_token_test.ts"],
  // The proxy (middleware/proxy.ts, src/upstream/forward.ts, src/upstream/exchange.ts): what is
  // forwarded, what comes back from a hostile core, failures and timeouts, against real upstreams.
  "src/upstream/exchange.ts": ["tests/security/upstream_desync_test.ts"],
  "middleware/proxy.ts": [
    "tests/security/upstream_request_headers_test.ts",
    "tests/security/upstream_answer_headers_test.ts",
    "tests/security/upstream_answer_errors_test.ts",
    "tests/security/upstream_certificate_headers_test.ts",
    "tests/security/upstream_encoding_test.ts",
    "tests/faults/upstream_faults_test.ts",
  ],
  "src/upstream/forward.ts": [
    "tests/middleware/proxy_test.ts",
    "tests/security/upstream_request_headers_test.ts",
    "tests/security/upstream_answer_headers_test.ts",
    "tests/security/upstream_certificate_headers_test.ts",
    "tests/security/upstream_encoding_test.ts",
    "tests/faults/upstream_faults_test.ts",
  ],
  // A core's 5xx answered as the gateway's own error (proxy.core_errors).
  "middleware/_core_errors.ts": ["tests/security/upstream_answer_errors_test.ts"],
  // What a JSON answer is, whatever the core's spelling of its media type.
  "src/core/answer.ts": ["tests/security/upstream_answer_links_test.ts"],
  // Connection reuse only after an echoed X-Request-ID, with either upstream client.
  "src/upstream/http1/client.ts": ["tests/security/upstream_late_answer_test.ts"],
  "src/upstream/fetch.ts": ["tests/security/upstream_late_answer_test.ts"],
  // What every TPP shares upstream: circuits, slots and the catalogue cache, per caller.
  "src/upstream/caller_circuits.ts": ["tests/security/upstream_fair_shares_test.ts"],
  "src/upstream/limiter.ts": ["tests/security/upstream_fair_shares_test.ts"],
  "middleware/upstream_circuit.ts": ["tests/security/upstream_fair_shares_test.ts"],
  "middleware/upstream_limits.ts": ["tests/security/upstream_fair_shares_test.ts"],
  "middleware/catalogue_cache.ts": ["tests/security/upstream_fair_shares_test.ts"],
  // Bodies that mean another thing to the core: transfer encodings of a part, XML instructions.
  "src/bodies/multipart.ts": ["tests/security/body_encodings_test.ts"],
  "src/bodies/xml.ts": ["tests/security/body_encodings_test.ts"],
  // The consent scope's gaps (account before list, references other than the IBAN) and ids in
  // another case; the canonical form of an id every decision keys on.
  "middleware/consent_scope.ts": [
    "tests/middleware/consent_scope_cards_test.ts",
    "tests/security/card_accounts_test.ts",
    "tests/security/consent_scope_gaps_test.ts",
    "tests/security/identifiers_case_test.ts",
  ],
  // Another TPP's payment, consent or basket in a basket, ids in another case.
  "middleware/basket_scope.ts": [
    "tests/middleware/basket_scope_test.ts",
    "tests/security/basket_scope_test.ts",
  ],
  "middleware/_consent_grants.ts": [
    "tests/middleware/consent_scope_cards_test.ts",
    "tests/security/card_accounts_test.ts",
    "tests/security/consent_scope_gaps_test.ts",
    "tests/security/identifiers_case_test.ts",
  ],
  "src/psd2/identifiers.ts": [
    "tests/src/psd2/identifiers_test.ts",
    "tests/security/identifiers_case_test.ts",
  ],
  "src/lib/ip.ts": ["tests/security/identifiers_case_test.ts"],
  // Tokens bound to the presented certificate (require_binding).
  "middleware/bearer_token.ts": ["tests/security/token_binding_test.ts"],
  // The metrics port asks for METRICS_TOKEN where one is set.
  "src/http/endpoints.ts": ["tests/security/metrics_port_token_test.ts"],
  // A bounded store's room: decisions never evicted, each caller its share.
  "src/store/memory.ts": ["tests/security/store_shares_test.ts"],
  "src/store/owner_shares.ts": ["tests/security/store_shares_test.ts"],
  // A payment kept across a kill -9 of main.ts (minutes a run: it starts processes).
  "src/store/sqlite.ts": ["tests/security/store_restart_test.ts"],
  // tests/security/sandbox_pages_test.ts covers the sandbox bank, which is not mutated.
};

/**
 * The test that compares config/policy.schema.json with the schema the checks' zod options make:
 * it covers every `.describe()` text and check description (they reach the generated schema).
 */
const SCHEMA_TEST = "tests/src/policy/load_test.ts";

/** Test files never run per mutant: the fuzzers (minutes) and the whole-suite checks. */
const TOO_BROAD = [/^tests\/fuzz\//, /^tests\/architecture_test\.ts$/, /^tests\/src\/readme_test/];

/** Source files worth mutating: the gateway's own code, not the tests or the sandbox bank. */
export function isMutable(path: string): boolean {
  return /^(middleware|src)\/.+\.ts$/.test(path) && !path.startsWith("src/sandbox/") ||
    path === "main.ts" || path === "serve.ts";
}

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const entry of Deno.readDirSync(join(ROOT, dir))) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) out.push(...walk(path));
    else if (entry.name.endsWith("_test.ts")) out.push(path);
  }
  return out;
}

const IMPORT = /(?:from|import)\s*\(?\s*"(\.[^"]+\.ts)"/g;

/**
 * The test files that cover `file`: its mirror and {@link COVERED_BY}; without either, the test
 * files that import it. (Tests that import a library only to build their requests, as the
 * signature tests import digestOf, do not test it: with a mirror they are left out, for speed.)
 */
export function testsFor(file: string, testFiles = walk("tests")): string[] {
  const found = new Set<string>();
  const mirror = `tests/${file.replace(/\.ts$/, "_test.ts")}`;
  if (existsSync(join(ROOT, mirror))) found.add(mirror);
  if (found.size === 0 && !COVERED_BY[file]) {
    for (const test of testFiles) {
      if (TOO_BROAD.some((pattern) => pattern.test(test))) continue;
      const text = Deno.readTextFileSync(join(ROOT, test));
      for (const [, specifier] of text.matchAll(IMPORT)) {
        if (relative(ROOT, resolve(ROOT, dirname(test), specifier)) === file) found.add(test);
      }
    }
  }
  for (const test of COVERED_BY[file] ?? []) found.add(test);
  if (/\.describe\(|\bdescription:\s*"/.test(Deno.readTextFileSync(join(ROOT, file)))) {
    found.add(SCHEMA_TEST);
  }
  return [...found].sort();
}

function git(...args: string[]): string[] {
  const out = new Deno.Command("git", { args, cwd: ROOT, stdout: "piped", stderr: "null" })
    .outputSync();
  return new TextDecoder().decode(out.stdout).split("\n").filter(Boolean);
}

/** The source files changed since the branch left main, committed, staged or not, and new. */
export function changedFiles(): string[] {
  const [base] = git("merge-base", "main", "HEAD");
  const changed = [
    ...(base ? git("diff", "--name-only", base) : []),
    ...git("ls-files", "--others", "--exclude-standard"),
  ];
  return [...new Set(changed)].filter((f) => isMutable(f) && existsSync(join(ROOT, f))).sort();
}

async function run(command: string, args: string[], env: Record<string, string> = {}) {
  const status = await new Deno.Command(command, { args, cwd: ROOT, env }).spawn().status;
  return status.code;
}

async function installStryker(): Promise<void> {
  if (existsSync(join(STRYKER, "node_modules/@stryker-mutator/core"))) return;
  console.log("Installing StrykerJS into tests/mutation/stryker/node_modules (npm ci)");
  const code = await run("npm", ["ci", "--prefix", STRYKER, "--no-audit", "--no-fund"]);
  if (code !== 0) throw new Error("npm ci failed in tests/mutation/stryker");
}

interface MutantResult {
  id: string;
  mutatorName: string;
  replacement?: string;
  status: string;
  location: { start: { line: number; column: number }; end: { line: number; column: number } };
}

/** Score of one file's report: detected (killed, timed out) over valid mutants. */
export interface FileScore {
  file: string;
  tests: string[];
  killed: number;
  timeout: number;
  survived: number;
  noCoverage: number;
  errors: number;
  score: number;
  survivors: MutantResult[];
}

function score(file: string, tests: string[], report: string): FileScore {
  const json = JSON.parse(Deno.readTextFileSync(report));
  const mutants: MutantResult[] = Object.values(
    json.files as Record<string, { mutants: MutantResult[] }>,
  ).flatMap((f) => f.mutants);
  const count = (status: string) => mutants.filter((m) => m.status === status).length;
  const killed = count("Killed");
  const timeout = count("Timeout");
  const survived = count("Survived");
  const noCoverage = count("NoCoverage");
  const valid = killed + timeout + survived + noCoverage;
  return {
    file,
    tests,
    killed,
    timeout,
    survived,
    noCoverage,
    errors: count("CompileError") + count("RuntimeError"),
    score: valid === 0 ? 100 : Math.round(((killed + timeout) / valid) * 1000) / 10,
    survivors: mutants.filter((m) => m.status === "Survived" || m.status === "NoCoverage")
      .sort((a, b) => a.location.start.line - b.location.start.line),
  };
}

/** A file to mutate, whole or only on some lines (`file:12` or `file:12-30`, repeatable). */
interface Target {
  file: string;
  /** Stryker ranges of lines, `file:from-to`; none: the whole file. */
  ranges: string[];
}

/** Groups `file[:from[-to]]` arguments by file. */
export function targetsOf(args: string[]): Target[] {
  const byFile = new Map<string, Target>();
  for (const arg of args) {
    const match = /^(.+?\.ts)(?::(?:(\d+)(?:-(\d+))?|(survivors)))?$/.exec(arg);
    if (!match) throw new Error(`Not a file, file:line[-line] or file:survivors: "${arg}"`);
    const [, file, from, to, survivors] = match;
    const target = byFile.get(file) ?? { file, ranges: [] };
    byFile.set(file, target);
    if (from) target.ranges.push(`${file}:${from}-${to ?? from}`);
    if (survivors) {
      const left = summary().find((s) => s.file === file)?.survivors ?? [];
      if (left.length === 0) throw new Error(`No survivors of "${file}" in the stored reports`);
      target.ranges.push(...survivorRanges(file, left));
    }
  }
  return [...byFile.values()];
}

/** One Stryker run: `tests` against the mutants of `ranges` (none: the whole file). */
async function stryker(
  file: string,
  options: { tests: string[]; ranges: string[]; report: string; redisUrl: string },
): Promise<void> {
  const tmp = await Deno.makeTempDir({ prefix: "xs2a-stryker-" });
  console.log(
    `\n${file}${
      options.ranges.length > 0
        ? ` (lines ${options.ranges.map((r) => r.slice(file.length + 1)).join(", ")})`
        : ""
    }: ${options.tests.join(" ")}`,
  );
  const code = await run(
    "node",
    [
      join(STRYKER, "node_modules/@stryker-mutator/core/bin/stryker.js"),
      "run",
      join(STRYKER, "stryker.config.mjs"),
    ],
    {
      MUTATE_FILE: file,
      MUTATE_TESTS: options.tests.join(" "),
      MUTATE_REPORT: relative(ROOT, options.report),
      ...(options.ranges.length > 0 ? { MUTATE_RANGES: options.ranges.join(" ") } : {}),
      MUTATE_TMP: tmp,
      REDIS_URL: options.redisUrl,
      NO_COLOR: "1",
    },
  ).finally(() => Deno.remove(tmp, { recursive: true }).catch(() => {}));
  if (code !== 0) throw new Error(`Stryker failed on ${file} (exit ${code})`);
}

/** The lines of the given mutants, as Stryker ranges. */
function survivorRanges(file: string, mutants: MutantResult[]): string[] {
  return [
    ...new Set(mutants.map((m) => `${file}:${m.location.start.line}-${m.location.end.line}`)),
  ];
}

/** A run on some lines; its mutants are added to the file's earlier runs on lines. */
async function linesRun(
  file: string,
  options: { tests: string[]; ranges: string[]; lines: string; redisUrl: string },
): Promise<void> {
  const report = `${options.lines}.new`;
  await stryker(file, { ...options, report });
  const read = (path: string) =>
    JSON.parse(Deno.readTextFileSync(path)) as {
      files: Record<string, { mutants: MutantResult[] }>;
    };
  const next = read(report);
  if (existsSync(options.lines)) {
    const before = read(options.lines);
    for (const [name, entry] of Object.entries(next.files)) {
      entry.mutants = [...(before.files[name]?.mutants ?? []), ...entry.mutants];
    }
  }
  Deno.writeTextFileSync(options.lines, JSON.stringify(next));
  Deno.removeSync(report);
}

/**
 * Mutates one file. When it has a mirror test and further covering tests, in two passes: every
 * mutant against the mirror test alone (a unit test: seconds per mutant), then the survivors'
 * lines against all the covering tests. A mutant is killed by all the tests exactly when it is
 * killed in one of the passes, so the score is that of one run against all of them.
 */
async function mutate(target: Target, redisUrl: string): Promise<FileScore | undefined> {
  const { file } = target;
  const tests = testsFor(file);
  if (tests.length === 0) {
    console.log(`\n${file}: no test file covers it (add one, or map it in COVERED_BY)`);
    return undefined;
  }
  const name = file.replaceAll("/", "_").replace(/\.ts$/, "");
  const whole = join(REPORTS, `${name}.json`);
  // A run on some lines only does not replace the report of the whole file.
  const lines = join(REPORTS, `${name}.lines.json`);
  if (target.ranges.length > 0) {
    await linesRun(file, { tests, ranges: target.ranges, lines, redisUrl });
    return summary().find((s) => s.file === file) ?? score(file, tests, lines);
  }
  const mirror = `tests/${file.replace(/\.ts$/, "_test.ts")}`;
  if (!tests.includes(mirror) || tests.length === 1) {
    await stryker(file, { tests, ranges: [], report: whole, redisUrl });
    await Deno.remove(lines).catch(() => {});
    return score(file, tests, whole);
  }
  await stryker(file, { tests: [mirror], ranges: [], report: whole, redisUrl });
  await Deno.remove(lines).catch(() => {});
  const survivors = score(file, tests, whole).survivors;
  if (survivors.length > 0) {
    await linesRun(file, { tests, ranges: survivorRanges(file, survivors), lines, redisUrl });
  }
  return summary().find((s) => s.file === file);
}

function table(scores: FileScore[]): string {
  const rows = scores.map((s) =>
    `| \`${s.file}\` | ${s.score}% | ${s.killed} | ${s.timeout} | ${s.survived} | ${s.noCoverage} |`
  );
  return [
    "| file | score | killed | timeout | survived | no coverage |",
    "| ---- | ----- | ------ | ------- | -------- | ----------- |",
    ...rows,
  ].join("\n");
}

/** A mutant's identity across runs: what was changed where. */
function mutantKey(m: MutantResult): string {
  const { start, end } = m.location;
  return `${m.mutatorName}@${start.line}:${start.column}-${end.line}:${end.column}=${m.replacement}`;
}

/**
 * The score of each file from the stored reports: the last run of the whole file, with the
 * mutants a later run on some of its lines (`.lines.json`) killed counted as killed.
 */
export function summary(): FileScore[] {
  const scores: FileScore[] = [];
  const names = [...Deno.readDirSync(REPORTS)].map((e) => e.name);
  for (const name of names.filter((n) => n.endsWith(".json") && !n.endsWith(".lines.json"))) {
    const read = (file: string) =>
      JSON.parse(Deno.readTextFileSync(join(REPORTS, file))) as {
        files: Record<string, { mutants: MutantResult[] }>;
      };
    const whole = read(name);
    const lines = names.includes(name.replace(".json", ".lines.json"))
      ? read(name.replace(".json", ".lines.json"))
      : undefined;
    const killedLater = new Set(
      Object.values(lines?.files ?? {}).flatMap((f) => f.mutants)
        .filter((m) => m.status === "Killed" || m.status === "Timeout").map(mutantKey),
    );
    for (const [file, { mutants }] of Object.entries(whole.files)) {
      const merged = mutants.map((m) =>
        m.status !== "Killed" && killedLater.has(mutantKey(m)) ? { ...m, status: "Killed" } : m
      );
      const path = join(REPORTS, `.${file.replaceAll("/", "_")}.merged.json`);
      Deno.writeTextFileSync(path, JSON.stringify({ files: { [file]: { mutants: merged } } }));
      scores.push(score(file, [], path));
      Deno.removeSync(path);
    }
  }
  return scores.sort((a, b) => a.file.localeCompare(b.file));
}

function printSurvivors(scores: FileScore[]): void {
  for (const s of scores.filter((s) => s.survivors.length > 0)) {
    console.log(`\nSurvivors in ${s.file}:`);
    for (const m of s.survivors) {
      const { start } = m.location;
      console.log(
        `  ${start.line}:${start.column} ${m.mutatorName} ${m.status}: ${
          (m.replacement ?? "").replaceAll("\n", " ").slice(0, 100)
        }`,
      );
    }
  }
}

if (import.meta.main && Deno.args[0] === "--summary") {
  const scores = summary();
  console.log(table(scores));
  printSurvivors(scores);
  Deno.exit(0);
}

if (import.meta.main) {
  const targets = targetsOf(Deno.args.length > 0 ? Deno.args : changedFiles());
  if (targets.length === 0) {
    console.log("No gateway source file changed since main; name the files to mutate");
    Deno.exit(0);
  }
  for (const { file } of targets) {
    if (!existsSync(join(ROOT, file))) throw new Error(`No such file: "${file}"`);
  }
  await installStryker();
  await Deno.mkdir(REPORTS, { recursive: true });
  await using redis = await startRedisServer();
  const scores: FileScore[] = [];
  for (const target of targets) {
    const result = await mutate(target, redis.url);
    if (result) scores.push(result);
  }
  console.log(`\n${table(scores)}`);
  printSurvivors(scores);
}
