import assert from "node:assert/strict";
import { runClean } from "../../support/clean_run.ts";

/** `main.ts policy:check ...` in a clean environment plus `env`. */
function check(args: string[], env: Record<string, string> = {}) {
  return runClean(
    ["run", "--allow-read", "--allow-env", "main.ts", "policy:check", ...args],
    env,
  );
}

async function tempFile(text: string, suffix = ".yaml"): Promise<string> {
  const file = await Deno.makeTempFile({ suffix });
  await Deno.writeTextFile(file, text);
  return file;
}

Deno.test("policy:check lists the unset variables first and checks nothing that uses them", async () => {
  const result = await check(["config/production.example.yaml"]);
  assert.equal(result.code, 0, result.stderr);
  const lines = result.stdout.split("\n");
  assert.match(lines[0], /environment variables not set/);
  for (
    const [name, path] of [
      ["UPSTREAM_URL", "upstream.url"],
      ["STORE_URL", "store.url"],
      ["METRICS_TOKEN", "metrics.token"],
      ["QTSP_CA_BUNDLE", "trust.anchors.0"],
      ["OAUTH_JWKS_URL", "defaults.bearer_token.jwks_url"],
      ["OAUTH_ISSUER", "defaults.bearer_token.issuer"],
    ]
  ) assert.ok(lines.includes(`  - ${name} (${path})`), `${name} in\n${result.stdout}`);
  assert.doesNotMatch(result.stdout + result.stderr, /cannot read|Too small|Invalid/);
});

Deno.test("policy:check still reports the problems that do not depend on unset variables", async () => {
  const file = await tempFile(`upstream:
  url: \${UPSTREAM_URL}
metrics:
  token: \${TOKEN}
trust:
  anchors: ["\${CA_FILE}"]
defaults:
  proxy: { timeout: "soon" }
  bearer_token: { mode: enforce, jwks_url: "\${JWKS}", audience: [xs2a], leeway: "-1s" }
`);
  const result = await check([file]);
  assert.equal(result.code, 1);
  assert.match(result.stdout, /- TOKEN \(metrics\.token\)/);
  assert.match(result.stdout, /- CA_FILE \(trust\.anchors\.0\)/);
  assert.match(result.stdout, /- JWKS \(defaults\.bearer_token\.jwks_url\)/);
  assert.match(result.stderr, /defaults\.proxy\.timeout: /);
  assert.match(result.stderr, /defaults\.bearer_token\.leeway: /);
  assert.doesNotMatch(result.stderr, /metrics\.token|cannot read|\$\{CA_FILE\}|jwks_url/);
});

Deno.test("policy:check --env-file checks the values with the file's variables", async () => {
  const env = await tempFile(
    `# staging
UPSTREAM_URL=https://core.staging.internal
export STORE_URL="redis://redis.staging.internal:6379"
METRICS_TOKEN=short
QTSP_CA_BUNDLE='/nonexistent/qtsp-ca.pem'
OAUTH_JWKS_URL=https://idp.staging.internal/jwks
OAUTH_ISSUER=https://idp.staging.internal # the issuer
OAUTH_INTROSPECTION_URL=https://idp.staging.internal/introspect
OAUTH_CLIENT_SECRET=staging-secret
TPP_REGISTER_URL=https://register.staging.internal/tpps.json
`,
    ".env",
  );
  const result = await check(["--env-file", env, "config/production.example.yaml"]);
  assert.equal(result.code, 1);
  assert.doesNotMatch(result.stdout, /not set/);
  assert.match(result.stderr, /metrics\.token: Too small/);
  assert.match(result.stderr, /trust\.anchors\.0: cannot read file "\/nonexistent\/qtsp-ca\.pem"/);
  const fixed = await tempFile(
    (await Deno.readTextFile(env)).replace("short", "a-metrics-token-of-32-characters")
      .replace(/^QTSP.*$/m, ""),
    ".env",
  );
  const clean = await check([`--env-file=${fixed}`, "config/production.example.yaml"]);
  assert.equal(clean.code, 0, clean.stderr);
  assert.match(clean.stdout, /- QTSP_CA_BUNDLE \(trust\.anchors\.0\)/);
  assert.doesNotMatch(clean.stdout, /UPSTREAM_URL|METRICS_TOKEN/);
});

Deno.test("policy:check shows a YAML syntax error whole: line, column and excerpt", async () => {
  const file = await tempFile(`upstream:
  url: http://core.internal
defaults:
  body_limit: max_bytes: 10
`);
  const result = await check([file]);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /is not valid YAML/);
  assert.match(result.stderr, /line 4, column 15: Nested mappings are not allowed/);
  assert.match(result.stderr, /\n\s+body_limit: max_bytes: 10\n\s+\^\n/);
});
