import assert from "node:assert/strict";

/**
 * main.ts as the container and the binary run it: a policy file on the command line, the sandbox
 * bank behind it, a flow served, SIGHUP reloads, SIGTERM stops it cleanly.
 */
Deno.test("main.ts serves a flow with --policy, reloads on SIGHUP and stops cleanly on SIGTERM", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const file = await Deno.makeTempFile({ suffix: ".yaml" });
  await Deno.copyFile("config/policy.yaml", file);
  const env: Record<string, string> = {
    ...Deno.env.toObject(),
    PORT: String(port),
    SANDBOX_PORT: "0",
  };
  delete env.UPSTREAM_URL;
  delete env.GATEWAY_POLICY;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", "main.ts", "--policy", file],
    env,
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let said = "";
  while (!said.includes("xs2a-edge on")) {
    const { value, done } = await stderr.read();
    if (done) break;
    said += value;
  }
  assert.match(said, new RegExp(`xs2a-edge on http://127.0.0.1:${port} \\(policy ${file}\\)`));
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
  await new Promise((r) => setTimeout(r, 500));
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
  for (;;) {
    const { done, value } = await stderr.read();
    if (done) break;
    said += value;
  }
  assert.match(said, /policy reload refused/);
});
