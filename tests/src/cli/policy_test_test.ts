/** `policy:test`: the repository's cases pass; a miss is reported, in JUnit too, and exits 1. */
import assert from "node:assert/strict";
import { PIPELINE } from "../../../middleware/mod.ts";
import { policyTest, runCases } from "../../../src/cli/policy_test.ts";

for (const policy of ["config/policy.yaml", "config/production.example.yaml"]) {
  Deno.test(`policyTest() passes every case of ${policy}`, async () => {
    const cases = policy.replace(/\.yaml$/, ".cases.yaml");
    const results = await runCases(policy, cases, PIPELINE);
    assert.ok(results.length >= 6);
    assert.deepEqual(results.filter((r) => r.misses.length > 0), []);
  });
}

/** A cases file in a temporary directory. */
async function casesFile(text: string): Promise<string> {
  const dir = await Deno.makeTempDir();
  const file = `${dir}/cases.yaml`;
  await Deno.writeTextFile(file, text);
  return file;
}

Deno.test("policyTest() reports a case the policy does not meet, exits 1 and writes JUnit", async () => {
  const file = await casesFile(`
env: { STORE_KIND: memory }
cases:
  - name: a read without PSU-IP-Address passes
    operation: getAccountList
    headers: { Consent-ID: c-1 }
    expect: { status: 200, findings: [] }
  - name: a read without Consent-ID is expected through
    operation: getAccountList
    headers: { PSU-IP-Address: 192.0.2.1 }
    expect: { status: 200, reaches_core: true }
`);
  const results = await runCases("config/policy.yaml", file, PIPELINE);
  assert.deepEqual(results[0].misses, []);
  assert.deepEqual(results[1].misses, [
    "expected status 200, got 400 FORMAT_ERROR",
    "expected the core to be asked",
  ]);
  const junit = file.replace(/cases\.yaml$/, "junit.xml");
  const lines: string[] = [];
  const log = console.log;
  console.log = (line: string) => lines.push(line);
  try {
    assert.equal(await policyTest(["--junit", junit, "config/policy.yaml", file], PIPELINE), 1);
  } finally {
    console.log = log;
  }
  assert.match(lines.join("\n"), /MISS a read without Consent-ID is expected through/);
  const xml = await Deno.readTextFile(junit);
  assert.match(xml, /<testsuite [^>]*tests="2" failures="1"/);
  assert.match(xml, /<failure message="expected status 200, got 400 FORMAT_ERROR">/);
});

Deno.test("policyTest() matches findings by check, mode and code", async () => {
  const file = await casesFile(`
cases:
  - name: the finding of another check is a miss
    operation: getAccountList
    headers: { Consent-ID: c-1, PSU-IP-Address: nowhere }
    expect: { status: 400, code: FORMAT_ERROR, findings: [{ check: psu_ip_address, mode: report }] }
`);
  const [result] = await runCases("config/policy.yaml", file, PIPELINE);
  assert.deepEqual(result.misses, [
    "expected a finding of psu_ip_address report, got psu_ip_address (enforce, FORMAT_ERROR)",
  ]);
});

Deno.test("policyTest() refuses a cases file with a typo, naming the case and field (exit 2)", async () => {
  const file = await casesFile(`
cases:
  - name: a typo
    operation: getAccountList
    expect: { stauts: 200 }
`);
  const errors: string[] = [];
  const error = console.error;
  console.error = (line: string) => errors.push(line);
  try {
    assert.equal(await policyTest(["config/policy.yaml", file], PIPELINE), 2);
  } finally {
    console.error = error;
  }
  assert.match(errors.join("\n"), /cases\.0\.expect/);
});
