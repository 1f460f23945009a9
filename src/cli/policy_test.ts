/**
 * `deno task policy:test [--junit <file>] <policy file> <cases file>...`: runs each case's request
 * through the gateway the policy builds, offline, in front of a stand-in core on 127.0.0.1
 * (`stand_in_core.ts`), and compares the answer with the case's expectation (status, Berlin Group
 * code, the checks' findings as the access log records them). Prints one line per case; with
 * `--junit` also writes JUnit XML for CI. Exits 0 when every case passes, 1 on any miss, 2 when a
 * file cannot be used.
 *
 * Cases run in order against one gateway with a memory store, so that a case may test what an
 * earlier one left (a replay of its X-Request-ID, a count); nothing outside the process is touched.
 */
import { createApp } from "../http/app.ts";
import type { Pipeline } from "../core/chain.ts";
import { parsePolicy, type Policy, PolicyError } from "../policy/load.ts";
import { defaultServices } from "../policy/services.ts";
import { createUpstream } from "../upstream/mod.ts";
import { type LogEntry, memoryLogger } from "../lib/log.ts";
import { readPolicyFiles } from "../lib/policy_files.ts";
import { loadX509For } from "../pki/x509.ts";
import { startStandInCore } from "./stand_in_core.ts";
import {
  caseRequest,
  type CaseResult,
  CasesError,
  type PolicyCase,
  readCases,
} from "./policy_cases.ts";
import { junitXml } from "./junit.ts";

const USAGE = "usage: deno task policy:test [--junit <file>] <policy file> <cases file>...";

/** A finding as the access log records it. */
interface LoggedFinding {
  check: string;
  mode: string;
  code: string;
}

/** The misses of one answer against the case's expectation. */
function compare(
  item: PolicyCase,
  got: { status: number; code?: string; findings: LoggedFinding[]; reached: boolean },
): string[] {
  const { expect } = item;
  const misses: string[] = [];
  const seen = `${got.status}${got.code ? ` ${got.code}` : ""}`;
  if (got.status !== expect.status) misses.push(`expected status ${expect.status}, got ${seen}`);
  if (expect.code !== undefined && got.code !== expect.code) {
    misses.push(`expected code "${expect.code}", got ${got.code ? `"${got.code}"` : "none"}`);
  }
  const listed = got.findings.map((f) => `${f.check} (${f.mode}, ${f.code})`).join(", ");
  if (expect.findings?.length === 0 && got.findings.length > 0) {
    misses.push(`expected no findings, got ${listed}`);
  }
  for (const want of expect.findings ?? []) {
    const found = got.findings.some((f) =>
      f.check === want.check && (want.mode === undefined || f.mode === want.mode) &&
      (want.code === undefined || f.code === want.code)
    );
    if (!found) {
      const what = [want.check, want.mode, want.code].filter(Boolean).join(" ");
      misses.push(`expected a finding of ${what}, got ${listed || "none"}`);
    }
  }
  if (expect.reaches_core !== undefined && expect.reaches_core !== got.reached) {
    misses.push(expect.reaches_core ? "expected the core to be asked" : "the core was asked");
  }
  return misses;
}

/** The peer a request comes from: the first TLS terminator the policy trusts, else loopback. */
function terminatorPeer(policy: Policy): string {
  const first = policy.trust.terminators?.[0];
  return first ? first.replace(/\/\d+$/, "") : "127.0.0.1";
}

/** The Berlin Group code of an error answer, if it has one. */
async function answerCode(response: Response): Promise<string | undefined> {
  const text = await response.text();
  if (response.status < 400) return undefined;
  try {
    const body = JSON.parse(text);
    return body?.tppMessages?.[0]?.code;
  } catch {
    return undefined;
  }
}

/**
 * Runs the cases of one cases file against the policy file; throws {@link PolicyError} or
 * {@link CasesError} when either cannot be used.
 */
export async function runCases(
  policyFile: string,
  casesFile: string,
  pipeline: Pipeline,
): Promise<CaseResult[]> {
  const cases = await readCases(casesFile);
  await using core = startStandInCore();
  const env: Record<string, string> = { ...cases.env, UPSTREAM_URL: core.url };
  const lookup = (name: string) => (Object.hasOwn(env, name) ? env[name] : Deno.env.get(name));
  let text: string;
  try {
    text = await Deno.readTextFile(policyFile);
  } catch (error) {
    throw new PolicyError(policyFile, [`cannot read the file: ${(error as Error).message}`]);
  }
  await Promise.all([readPolicyFiles(text, lookup), loadX509For(text)]);
  const policy = parsePolicy(policyFile, text, { ...pipeline, env: lookup });
  const log = memoryLogger();
  // A memory store whatever the policy names: the test is offline and touches no shared state.
  const upstream = createUpstream(policy.upstream);
  try {
    const app = createApp({ policy, services: defaultServices({ log, upstream }) });
    const results: CaseResult[] = [];
    for (const item of cases.cases) {
      const started = performance.now();
      const request = await caseRequest(item, cases, policy.operations);
      const before = core.requests;
      const from = log.lines.length;
      const response = await app.fetch(request, {
        remoteAddr: {
          transport: "tcp",
          hostname: item.peer ?? terminatorPeer(policy),
          port: 40000,
        },
        completed: Promise.resolve(),
      });
      const code = await answerCode(response);
      const line = log.lines.slice(from).find((l: LogEntry) => "findings" in l && "status" in l);
      const findings = (line?.findings ?? []) as LoggedFinding[];
      results.push({
        file: casesFile,
        name: item.name,
        misses: compare(item, {
          status: response.status,
          code,
          findings,
          reached: core.requests > before,
        }),
        ms: Math.round(performance.now() - started),
      });
    }
    return results;
  } finally {
    upstream.close();
  }
}

/** Parses `args`, runs every cases file, prints the results; returns the exit code. */
export async function policyTest(args: string[], pipeline: Pipeline): Promise<number> {
  const rest = [...args];
  let junit: string | undefined;
  const flag = rest.indexOf("--junit");
  if (flag >= 0) [, junit] = rest.splice(flag, 2);
  const [policyFile, ...casesFiles] = rest;
  if (!policyFile || casesFiles.length === 0 || (flag >= 0 && !junit)) {
    console.error(USAGE);
    return 2;
  }
  const results: CaseResult[] = [];
  for (const casesFile of casesFiles) {
    try {
      results.push(...await runCases(policyFile, casesFile, pipeline));
    } catch (error) {
      if (!(error instanceof PolicyError || error instanceof CasesError)) throw error;
      console.error(error.message);
      return 2;
    }
  }
  for (const r of results) {
    console.log(`${r.misses.length === 0 ? "ok  " : "MISS"} ${r.name}`);
    for (const miss of r.misses) console.log(`       ${miss}`);
  }
  const missed = results.filter((r) => r.misses.length > 0).length;
  console.log(`\n${results.length - missed} passed, ${missed} missed (${policyFile})`);
  if (junit) await Deno.writeTextFile(junit, junitXml(policyFile, results));
  return missed > 0 ? 1 : 0;
}
