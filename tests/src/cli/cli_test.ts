import assert from "node:assert/strict";

async function run(...args: string[]) {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-read", "--allow-env", "main.ts", ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
}

Deno.test("policy:check accepts the shipped policy files", async () => {
  for (const file of ["config/policy.yaml"]) {
    const result = await run("policy:check", file);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /valid \(\d+ operations\)/);
  }
});

Deno.test("policy:check lists every problem of a bad file and exits 1", async () => {
  const file = await Deno.makeTempFile({ suffix: ".yaml" });
  await Deno.writeTextFile(
    file,
    `upstream:
  url: \${UPSTREAM_URL}
defaults:
  proxy: { timeout: "soon" }
  body_limt: {}
operations:
  getBalance: {}
`,
  );
  const result = await run("policy:check", file);
  assert.equal(result.code, 1);
  assert.match(result.stderr, new RegExp(`Policy file "${file}" is invalid`));
  assert.match(result.stderr, /defaults\.proxy\.timeout: /);
  assert.match(result.stderr, /"body_limt"/);
  assert.match(result.stderr, /operations: unknown operation "getBalance"/);
});

Deno.test("policy:explain prints an operation's chain in order with resolved options", async () => {
  const file = await Deno.makeTempFile({ suffix: ".yaml" });
  await Deno.writeTextFile(
    file,
    `upstream:
  url: http://core.internal:9000
groups:
  ais:
    proxy: { timeout: 5s }
operations:
  getBalances:
    proxy: { retry_reads: false }
`,
  );
  const result = await run("policy:explain", file, "getBalances");
  assert.equal(result.code, 0, result.stderr);
  assert.match(
    result.stdout,
    /route: GET \/v1\/accounts\/\{account-id\}\/balances -> http:\/\/core\.internal:9000\/psd2\/v1\/accounts\/\{account-id\}\/balances/,
  );
  assert.match(result.stdout, /timeout: 5000/);
  assert.match(result.stdout, /retry_reads: false/);
  assert.doesNotMatch(result.stdout, /initiatePayment/);
  const order = [...result.stdout.matchAll(/- check: (\w+)/g)].map((m) => m[1]);
  assert.equal(order.at(-1), "proxy", "the proxy is the terminal handler");
  assert.ok(order.indexOf("body_limit") < order.indexOf("proxy"));
  assert.match(result.stdout, /check: deprecation\n\s+mode: not applicable/);
});

Deno.test("policy:explain explains the shipped default policy with its environment defaults", async () => {
  const result = await run("policy:explain", "config/policy.yaml", "getBalances");
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /route: GET \/v1\/accounts\/\{account-id\}\/balances -> /);
});

Deno.test("policy:explain never prints a secret option's value", async () => {
  const file = await Deno.makeTempFile({ suffix: ".yaml" });
  await Deno.writeTextFile(
    file,
    `upstream:\n  url: http://127.0.0.1:9\ndefaults:\n  bearer_token:\n    mode: enforce\n    jwks_url: http://127.0.0.1:9/jwks\n    verification: introspection\n    introspection: { url: "http://127.0.0.1:9/introspect", client_id: gw, client_secret: s3cr3t-value }\n`,
  );
  const result = await run("policy:explain", file, "getAccountList");
  assert.equal(result.code, 0, result.stderr);
  assert.doesNotMatch(result.stdout, /s3cr3t-value/);
  assert.match(result.stdout, /client_secret: \(secret, set\)/);
});
