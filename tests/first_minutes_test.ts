/**
 * A newcomer's first minutes: `deno task start` (src/sandbox/start.ts) and main.ts say in one JSON
 * line which port is busy and which variable sets it, `start` says when it replaces a set
 * UPSTREAM_URL, nothing but the gateway's own lines is printed through the README's first payment,
 * and the README's set-up names everything the suite needs.
 */
import assert from "node:assert/strict";
import { readUntil, startMain } from "./support/main_process.ts";
import { closedPort } from "./support/upstream.ts";
import { notJson } from "./support/clean_run.ts";

/** The environment of this process without the gateway's variables, plus `env`. */
function cleanEnv(env: Record<string, string>): Record<string, string> {
  const base: Record<string, string> = { ...Deno.env.toObject() };
  for (const name of ["UPSTREAM_URL", "GATEWAY_POLICY", "PORT", "SANDBOX_PORT", "HOST"]) {
    delete base[name];
  }
  return { ...base, ...env };
}

/** Runs `entry` to its end (it is expected to refuse) and returns its exit code and stderr. */
async function refused(entry: string, env: Record<string, string>) {
  const main = await startMain([], { env: cleanEnv(env), clearEnv: true, entry });
  const said = await readUntil(main);
  const { code } = await main.child.status;
  await main.child.stdout.cancel();
  return { code, said };
}

Deno.test("main.ts names the busy port and PORT in one JSON line", async () => {
  using busy = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (busy.addr as Deno.NetAddr).port;
  const { code, said } = await refused("main.ts", {
    PORT: String(port),
    UPSTREAM_URL: `http://127.0.0.1:${closedPort()}`,
  });
  assert.equal(code, 1);
  const lines = said.trim().split("\n");
  assert.deepEqual(notJson(said), [], said);
  assert.equal(lines.length, 1, said);
  const line = JSON.parse(lines[0]);
  assert.equal(line.msg, "the gateway cannot start");
  assert.equal(line.port, port);
  assert.equal(line.variable, "PORT");
  assert.match(line.problems[0], new RegExp(`Port ${port} .* is in use.*set PORT`));
});

Deno.test("deno task start names the busy port and SANDBOX_PORT in one JSON line", async () => {
  using busy = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (busy.addr as Deno.NetAddr).port;
  const { code, said } = await refused("src/sandbox/start.ts", {
    PORT: String(closedPort()),
    SANDBOX_PORT: String(port),
  });
  assert.equal(code, 1);
  assert.deepEqual(notJson(said), [], said);
  const line = JSON.parse(said.trim());
  assert.equal(line.msg, "the sandbox bank cannot start");
  assert.equal(line.port, port);
  assert.equal(line.variable, "SANDBOX_PORT");
});

Deno.test("deno task start says when it replaces a set UPSTREAM_URL, and prints no warning through a payment", async () => {
  const port = closedPort();
  const core = "http://core.bank.example:9000";
  const main = await startMain([], {
    env: cleanEnv({ PORT: String(port), SANDBOX_PORT: "0", UPSTREAM_URL: core }),
    clearEnv: true,
    entry: "src/sandbox/start.ts",
  });
  const { child } = main;
  try {
    const notice = main.said.split("\n").find((line) => line.includes(core));
    assert.ok(notice, main.said);
    assert.equal(JSON.parse(notice).variable, "UPSTREAM_URL");
    assert.match(
      JSON.parse(notice).msg,
      /is replaced by the sandbox bank's http:\/\/127\.0\.0\.1:/,
    );

    // The README's first payment: it reaches the sandbox (201), not the replaced URL.
    const created = await fetch(`http://127.0.0.1:${port}/v1/payments/domestic`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-request-id": crypto.randomUUID(),
        "psu-ip-address": "192.0.2.17",
        "psu-id": "PSU-OK",
        "tpp-redirect-preferred": "true",
        "tpp-redirect-uri": "https://tpp.example/ok",
        "tpp-nok-redirect-uri": "https://tpp.example/nok",
      },
      body: JSON.stringify({
        debtorAccount: { iban: "GE42SB0000000101904917" },
        instructedAmount: { currency: "GEL", amount: "12.50" },
        creditorAccount: { iban: "GE29NB0000000101904917" },
        creditorName: "Tbilisi Energy",
      }),
    });
    const answer = await created.text();
    assert.equal(created.status, 201, answer);
  } finally {
    child.kill("SIGTERM");
  }
  const said = await readUntil(main);
  assert.equal((await child.status).code, 0);
  await child.stdout.cancel();
  // Everything on stderr is the gateway's JSON, but the sandbox's own line: no runtime warning
  // (Deno's "request.signal aborts on successful responses" was printed at the first payment).
  assert.deepEqual(notJson(said).filter((line) => !line.startsWith("sandbox bank on ")), []);
});

Deno.test("the README's set-up names chromium and the suite's duration", async () => {
  const readme = await Deno.readTextFile("README.md");
  const setUp = readme.slice(0, readme.indexOf("## Try it"));
  const install = setUp.split("\n").find((line) => line.startsWith("apt-get install"));
  assert.ok(install, setUp);
  for (const name of ["redis-server", "wrk", "chromium"]) {
    assert.match(install, new RegExp(`\\b${name}\\b`), `${name} in: ${install}`);
  }
  assert.match(setUp, /about five minutes/);
});
