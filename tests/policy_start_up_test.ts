/**
 * `policy:check` and `policy:explain` decide as start-up does, and start-up refuses in one JSON
 * line: the production example with `store.cluster: true` (its `per_client` limit counts by
 * client address, not by TPP, which a Redis Cluster needs) fails all of them with the same text,
 * under main.ts before any "policy loaded" line and under `deno serve` without a stack trace.
 */
import assert from "node:assert/strict";
import { createCa } from "./support/pki.ts";
import { closedPort } from "./support/upstream.ts";
import { serveArgs } from "./support/main_process.ts";
import { notJson, runClean as run } from "./support/clean_run.ts";

/** The problem every one of them names. */
const PER_CLIENT = /rate_limit\.limits\.per_client: key \[client_ip\] does not count by tpp/;

/** The variables a production policy uses, as a bank would give them (no server is reached). */
async function productionEnv(): Promise<Record<string, string>> {
  const ca = await Deno.makeTempFile({ suffix: ".pem" });
  await Deno.writeTextFile(ca, (await createCa()).pem);
  return {
    UPSTREAM_URL: `http://127.0.0.1:${closedPort()}`,
    // A node nobody listens on: the refusal must not wait for the store.
    STORE_URL: `redis://127.0.0.1:${closedPort()}`,
    METRICS_TOKEN: "0123456789abcdef0123456789abcdef",
    QTSP_CA_BUNDLE: ca,
    TPP_REGISTER_URL: "config/tpp_register.example.json",
    OAUTH_JWKS_URL: "https://auth.bank.example/.well-known/jwks.json",
    OAUTH_ISSUER: "https://auth.bank.example",
    OAUTH_INTROSPECTION_URL: "https://auth.bank.example/introspect",
    OAUTH_CLIENT_SECRET: "s3cr3t-s3cr3t-s3cr3t",
  };
}

/** The production example with `store.cluster: true`, as a file. */
async function clusterPolicy(): Promise<string> {
  const text = await Deno.readTextFile("config/production.example.yaml");
  const changed = text.replace(/^( {2}prefix: "xs2a:"\n)/m, "$1  cluster: true\n");
  assert.notEqual(changed, text);
  const file = await Deno.makeTempFile({ suffix: ".yaml" });
  await Deno.writeTextFile(file, changed);
  return file;
}

/** `main.ts` run for its policy commands (reads the policy and the environment only). */
const CLI = ["run", "--allow-read", "--allow-env", "main.ts"];

Deno.test("policy:check refuses what start-up refuses: a cluster store with a limit not by TPP", async () => {
  const env = await productionEnv();
  const file = await clusterPolicy();
  try {
    const envFile = await Deno.makeTempFile({ suffix: ".env" });
    await Deno.writeTextFile(
      envFile,
      Object.entries(env).map(([name, value]) => `${name}=${value}`).join("\n"),
    );
    const checked = await run(
      [...CLI, "policy:check", "--env-file", envFile, file],
      {},
    );
    assert.equal(checked.code, 1, checked.stdout);
    assert.match(checked.stderr, PER_CLIENT);
    assert.doesNotMatch(checked.stdout, /valid/);

    // policy:explain: the same validation, and --env-file read the same way.
    const explained = await run(
      [...CLI, "policy:explain", "--env-file", envFile, file],
      {},
    );
    assert.equal(explained.code, 1, explained.stdout);
    assert.match(explained.stderr, PER_CLIENT);

    // The unchanged example, with the same variables, passes both.
    const shipped = await run(
      [...CLI, "policy:check", "--env-file", envFile, "config/production.example.yaml"],
      {},
    );
    assert.equal(shipped.code, 0, shipped.stderr);
    assert.match(shipped.stdout, /valid \(\d+ operations\)/);
  } finally {
    await Deno.remove(file);
  }
});

Deno.test("policy:explain --env-file lists the unset variables as policy:check does", async () => {
  const envFile = await Deno.makeTempFile({ suffix: ".env" });
  await Deno.writeTextFile(envFile, "UPSTREAM_URL=http://core.example:9000\n");
  const checked = await run([...CLI, "policy:check", "config/production.example.yaml"], {});
  const explained = await run(
    [...CLI, "policy:explain", "--env-file", envFile, "config/production.example.yaml"],
    {},
  );
  const unset = (text: string) => text.split("\n").filter((line) => line.startsWith("  - "));
  // Every variable policy:check lists but the one the file gives.
  assert.deepEqual(
    unset(explained.stderr),
    unset(checked.stdout).filter((line) => !line.includes("UPSTREAM_URL")),
  );
  assert.ok(unset(explained.stderr).length > 0);
  // Its values are stand-ins: it cannot explain the policy (the CA bundle is not there), and says so.
  assert.equal(explained.code, 1);
  assert.match(explained.stderr, /cannot explain it before those variables are set/);

  const clean = await run(
    [...CLI, "policy:explain", "--env-file", envFile, "config/policy.yaml", "getBalances"],
    {},
  );
  assert.equal(clean.code, 0, clean.stderr);
  assert.match(
    clean.stdout,
    /route: GET \/v1\/accounts\/\{account-id\}\/balances -> http:\/\/core\.example:9000/,
  );
});

Deno.test("main.ts refuses a cluster store with a limit not by TPP in one JSON line, before 'policy loaded'", async () => {
  const env = await productionEnv();
  const file = await clusterPolicy();
  try {
    const result = await run(
      ["run", "--allow-all", "main.ts", "--policy", file],
      { ...env, PORT: String(closedPort()) },
    );
    assert.equal(result.code, 1);
    const output = result.stdout + result.stderr;
    assert.deepEqual(notJson(output), [], output);
    const lines = output.trim().split("\n").map((line) => JSON.parse(line));
    assert.equal(lines.length, 1, output);
    assert.equal(lines[0].msg, "the gateway cannot start");
    assert.match(lines[0].problems.join("\n"), PER_CLIENT);
  } finally {
    await Deno.remove(file);
  }
});

Deno.test("serve.ts refuses a cluster store with a limit not by TPP in JSON lines, no stack trace", async () => {
  const env = await productionEnv();
  const file = await clusterPolicy();
  try {
    const result = await run(
      serveArgs(closedPort()),
      { ...env, GATEWAY_POLICY: file, DENO_JOBS: "2" },
    );
    assert.equal(result.code, 1);
    // deno serve prefixes a worker's console lines; the gateway writes its own lines, JSON only.
    const output = result.stdout + result.stderr;
    assert.deepEqual(notJson(output), [], output);
    assert.doesNotMatch(output, /\n\s+at /);
    for (const line of output.trim().split("\n")) {
      const entry = JSON.parse(line);
      assert.equal(entry.msg, "the gateway cannot start");
      assert.match(entry.problems.join("\n"), PER_CLIENT);
    }
  } finally {
    await Deno.remove(file);
  }
});
