/** `policy:diff`: a change of the policy as a reviewer reads it, per operation. */
import assert from "node:assert/strict";
import { PIPELINE } from "../../../middleware/mod.ts";
import { policyChanges, policyDiff } from "../../../src/cli/policy_diff.ts";
import { parsePolicy } from "../../../src/policy/load.ts";
import { durationText } from "../../../src/cli/policy_durations.ts";

const BASE = `
upstream: { url: "http://127.0.0.1:9" }
defaults:
  psu_device_id: { mode: enforce }
  query_params: { max_page_size: 100 }
`;

function policy(text: string) {
  return parsePolicy("p.yaml", text, PIPELINE);
}

Deno.test("policyChanges() of the same policy is nothing", () => {
  assert.deepEqual(policyChanges(policy(BASE), policy(BASE)), []);
});

Deno.test("policyChanges() names modes, switches, options and the operations they touch", () => {
  const after = policy(
    `${BASE}
  bearer_token: { mode: "off" }
groups:
  pis:
    digest: { required: true }
operations:
  getAccountList:
    psu_device_id: { mode: report }
`.replace("max_page_size: 100", "max_page_size: 50").replace(
      "psu_device_id: { mode: enforce }",
      'psu_device_id: { mode: enforce }\n  http_signature: { mode: "off" }',
    ),
  );
  const lines = policyChanges(policy(BASE), after);
  assert.deepEqual(lines, [
    "- query_params.max_page_size: 100 -> 50 (on every operation (51))",
    "- digest.required: false -> true (on group pis (12))",
    "- http_signature: switched off (was enforce) (on every operation (51))",
    "- psu_device_id: mode enforce -> report (on getAccountList)",
    "\n51 of 51 operations change.",
  ]);
});

Deno.test("policyChanges() prints durations as a policy writes them, with their unit", () => {
  const before = policy(`${BASE}
  rate_limit:
    limits:
      psu: { key: [psu_id], limit: 10, window: 1h }
readiness: { interval: 5s }
store: { kind: memory, timeout: 500ms }
`);
  const after = policy(
    `${BASE}
  idempotency: { retention: 48h, wait: 400ms }
  rate_limit:
    limits:
      psu: { key: [psu_id], limit: 20, window: 1d }
readiness: { interval: 90s }
store: { kind: memory, timeout: 2s }
trust: { clock_skew: 30s }
`,
  );
  const lines = policyChanges(before, after);
  for (
    const line of [
      "- readiness.interval: 5s -> 90s (section: every operation)",
      "- store.timeout: 500ms -> 2s (section: every operation)",
      // The default as the schema writes it (60s), not its largest unit (1m).
      "- trust.clock_skew: 60s -> 30s (section: every operation)",
      "- idempotency.retention: 24h -> 48h (on group piis (1), initiatePayment, ",
      "- idempotency.wait: 5s -> 400ms (on group piis (1), initiatePayment, ",
    ]
  ) assert.ok(lines.some((l) => l.startsWith(line)), `${line}\n in:\n${lines.join("\n")}`);
  assert.ok(
    lines.some((line) =>
      /^- rate_limit\.limits\.psu\.window: 1h -> 24h \(on every operation/.test(line)
    ),
    lines.join("\n"),
  );
  assert.ok(!lines.some((line) => /[0-9]{4,}/.test(line.replace(/\(38\)/, ""))), lines.join("\n"));
  assert.ok(
    lines.some((line) => /rate_limit\.limits\.psu\.limit: 10 -> 20 /.test(line)),
    "a count stays a number",
  );
});

Deno.test("durationText() writes the largest unit that divides, days from a week", () => {
  assert.deepEqual(
    [86_400_000, 172_800_000, 34_560_000_000, 5000, 400, 90_000, 60_000, 1500, 0].map(durationText),
    ["24h", "48h", "400d", "5s", "400ms", "90s", "1m", "1500ms", "0h"],
  );
});

Deno.test("policyDiff() --git compares with the committed file and exits 1 on a change", async () => {
  const dir = await Deno.makeTempDir();
  const git = (...args: string[]) =>
    new Deno.Command("git", { args, cwd: dir, stdout: "null", stderr: "null" }).output();
  await git("init", "-q");
  await Deno.writeTextFile(`${dir}/p.yaml`, BASE);
  await git("add", "p.yaml");
  await git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "p");
  await Deno.writeTextFile(
    `${dir}/p.yaml`,
    BASE.replace("max_page_size: 100", "max_page_size: 10"),
  );
  const printed: string[] = [];
  const log = console.log;
  const cwd = Deno.cwd();
  console.log = (line: string) => printed.push(line);
  Deno.chdir(dir);
  try {
    assert.equal(await policyDiff(["--git", "HEAD", "p.yaml"], PIPELINE), 1);
    assert.equal(await policyDiff(["p.yaml", "p.yaml"], PIPELINE), 0);
    assert.equal(await policyDiff(["--git", "no-such-rev", "p.yaml"], PIPELINE), 2);
  } finally {
    Deno.chdir(cwd);
    console.log = log;
  }
  assert.match(printed.join("\n"), /What changes from HEAD:p\.yaml to p\.yaml/);
  assert.match(printed.join("\n"), /query_params\.max_page_size: 100 -> 10/);
});

Deno.test("policyDiff() reads a production policy without its secrets, given the files it names", async () => {
  const env = await Deno.makeTempFile();
  await Deno.writeTextFile(
    env,
    "QTSP_CA_BUNDLE=config/testing/qtsp_ca.pem\nTPP_REGISTER_URL=config/tpp_register.example.json\n",
  );
  const file = "config/production.example.yaml";
  const log = console.log;
  console.log = () => {};
  try {
    // STORE_URL, OAUTH_* and METRICS_TOKEN are unset: stand-ins of the right form.
    assert.equal(await policyDiff(["--env-file", env, file, file], PIPELINE), 0);
  } finally {
    console.log = log;
  }
});
