import assert from "node:assert/strict";
import { readUntil, startMain } from "./support/main_process.ts";
import { closedPort } from "./support/upstream.ts";

/**
 * The gateway as `deno task start` runs it (src/sandbox/start.ts: the sandbox bank, then main.ts in
 * front of it): a policy file on the command line, a flow served, SIGHUP reloads, SIGTERM stops it
 * cleanly.
 */
Deno.test("deno task start serves a flow with --policy, reloads on SIGHUP and stops cleanly on SIGTERM", async () => {
  const port = closedPort();
  const file = await Deno.makeTempFile({ suffix: ".yaml" });
  await Deno.copyFile("config/policy.yaml", file);
  const env: Record<string, string> = {
    ...Deno.env.toObject(),
    PORT: String(port),
    SANDBOX_PORT: "0",
  };
  delete env.UPSTREAM_URL;
  delete env.GATEWAY_POLICY;
  const main = await startMain(["--policy", file], {
    env,
    clearEnv: true,
    entry: "src/sandbox/start.ts",
  });
  const { child } = main;
  assert.match(main.said, new RegExp(`xs2a-edge on http://127.0.0.1:${port} \\(policy ${file}\\)`));
  const url = `http://127.0.0.1:${port}`;
  const created = await fetch(`${url}/v1/consents`, {
    method: "POST",
    headers: {
      "x-request-id": crypto.randomUUID(),
      "psu-ip-address": "192.0.2.1",
      "content-type": "application/json",
    },
    body: JSON.stringify({
      access: { balances: [{ iban: "GE42SB0000000101904917" }] },
      recurringIndicator: false,
      validUntil: "2030-01-01",
      frequencyPerDay: 1,
      combinedServiceIndicator: false,
    }),
  });
  assert.equal(created.status, 201);
  const { consentId } = await created.json();

  await Deno.writeTextFile(file, "upstream: [broken\n");
  child.kill("SIGHUP");
  await readUntil(main, /policy reload refused/);
  const status = await fetch(`${url}/v1/consents/${consentId}/status`, {
    headers: { "x-request-id": crypto.randomUUID() },
  });
  assert.equal(status.status, 200, "a refused reload leaves the gateway serving");
  assert.deepEqual(await status.json(), { consentStatus: "received" });

  child.kill("SIGTERM");
  const exit = await child.status;
  assert.equal(exit.code, 0);
  const stdout = await new Response(child.stdout).text();
  assert.match(stdout, /"op":"createConsent"/, "the access log was flushed before exit");
  await readUntil(main);
});

Deno.test("main.ts never starts the sandbox bank: without UPSTREAM_URL it refuses to start and names the variable", async () => {
  const env: Record<string, string> = {
    ...Deno.env.toObject(),
    PORT: String(closedPort()),
    SANDBOX_PORT: "0",
  };
  delete env.UPSTREAM_URL;
  delete env.GATEWAY_POLICY;
  const { child, said } = await startMain([], { env, clearEnv: true });
  const exit = await child.status;
  await child.stdout.cancel();
  assert.equal(exit.code, 1);
  // A JSON line: the quotes of the text are escaped.
  assert.match(said, /environment variable \\"UPSTREAM_URL\\" is not set/);
  assert.doesNotMatch(said, /sandbox bank on/);
});

Deno.test("main.ts refuses PORT=abc with a message naming the variable, before it loads the policy", async () => {
  const env: Record<string, string> = {
    ...Deno.env.toObject(),
    UPSTREAM_URL: "http://127.0.0.1:9",
    PORT: "abc",
    GATEWAY_WATCH: "false",
  };
  delete env.GATEWAY_POLICY;
  const { child, said } = await startMain([], { env, clearEnv: true });
  const exit = await child.status;
  await child.stdout.cancel();
  assert.equal(exit.code, 1);
  assert.match(
    said,
    /Environment variable \\"PORT\\" must be a port number \(0 to 65535\), got \\"abc\\"/,
  );
  assert.doesNotMatch(said, /xs2a-edge on|NaN/);
});

Deno.test("deno task start refuses SANDBOX_PORT=abc with a message naming the variable", async () => {
  const env: Record<string, string> = { ...Deno.env.toObject(), SANDBOX_PORT: "abc" };
  delete env.UPSTREAM_URL;
  const { child, said } = await startMain([], {
    env,
    clearEnv: true,
    entry: "src/sandbox/start.ts",
  });
  const exit = await child.status;
  await child.stdout.cancel();
  assert.equal(exit.code, 1);
  assert.match(said, /Environment variable "SANDBOX_PORT" must be a port number .*, got "abc"/);
  assert.doesNotMatch(said, /sandbox bank on/);
});
/** Each line of `text` as JSON, with its time and level (fails on a line that is not). */
function jsonLines(text: string): Record<string, unknown>[] {
  return text.split("\n").filter((l) => l.trim() !== "").map((line) => {
    let entry: Record<string, unknown>;
    try {
      entry = JSON.parse(line);
    } catch {
      assert.fail(`not a JSON line: ${line}`);
    }
    assert.ok(!Number.isNaN(Date.parse(String(entry.time))), `no time: ${line}`);
    assert.ok(["info", "warn", "error"].includes(String(entry.level)), `no level: ${line}`);
    return entry;
  });
}

Deno.test("main.ts writes nothing but JSON lines with a time and a level, on stdout and stderr", async () => {
  const { startUpstream } = await import("./support/upstream.ts");
  await using upstream = startUpstream();
  const file = await Deno.makeTempFile({ suffix: ".yaml" });
  await Deno.copyFile("config/policy.yaml", file);
  const port = closedPort();
  const env: Record<string, string> = {
    ...Deno.env.toObject(),
    PORT: String(port),
    UPSTREAM_URL: upstream.url,
  };
  delete env.GATEWAY_POLICY;
  const main = await startMain(["--policy", file], { env });
  const { child } = main;
  const response = await fetch(`http://127.0.0.1:${port}/v1/consents/c-1/status`, {
    headers: { "x-request-id": crypto.randomUUID() },
  });
  await response.body?.cancel();
  await Deno.writeTextFile(file, "upstream: [broken\n");
  child.kill("SIGHUP");
  await readUntil(main, /policy reload refused/);
  child.kill("SIGTERM");
  assert.equal((await child.status).code, 0);
  const errors = jsonLines(await readUntil(main));
  const access = jsonLines(await new Response(child.stdout).text());
  assert.ok(errors.some((l) => String(l.msg).startsWith("xs2a-edge on http://127.0.0.1:")));
  assert.ok(errors.some((l) => l.outcome === "refused" && l.level === "error"));
  assert.ok(errors.some((l) => String(l.msg).startsWith("xs2a-edge stopped")));
  assert.ok(access.some((l) => l.op === "getConsentStatus"), "the access log");
  assert.ok(access.some((l) => l.audit === "policy" && l.trigger === "start"), "the start's audit");
  // The default policy names the memory store: the start says once that it forgets on restart.
  const forgets = access.filter((l) => l.level === "warn" && l.store === "memory");
  assert.equal(forgets.length, 1, "the memory store's warning");

  // A start refused: the problems as one JSON line too.
  const refused = await startMain(["--policy", "/nonexistent/policy.yaml"], { env });
  assert.equal((await refused.child.status).code, 1);
  await refused.child.stdout.cancel();
  const [line] = jsonLines(refused.said);
  assert.equal(line.level, "error");
  assert.match(String((line.problems as string[])[0]), /cannot read the file/);
});
