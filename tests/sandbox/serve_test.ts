import assert from "node:assert/strict";
import { localOrigin, sandboxEnv, serveSandbox } from "../../src/sandbox/serve.ts";

function env(values: Record<string, string>) {
  return (name: string) => values[name];
}

Deno.test("sandboxEnv() reads port, SCA origin and decoupled delay, with defaults", () => {
  const defaults = sandboxEnv(env({}));
  assert.equal(defaults.port, 8081);
  assert.equal(defaults.decoupledDelayMs, 5000);
  assert.equal(defaults.scaOrigin, localOrigin);
  const set = sandboxEnv(env({
    SANDBOX_PORT: "9000",
    SANDBOX_SCA_ORIGIN: "https://sandbox.bank.example",
    SANDBOX_DECOUPLED_DELAY_MS: "250",
  }));
  assert.deepEqual(set, {
    port: 9000,
    scaOrigin: "https://sandbox.bank.example",
    decoupledDelayMs: 250,
  });
});

Deno.test("sandboxEnv() names the variable and the value it cannot use", () => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ SANDBOX_PORT: "80a" }, /"SANDBOX_PORT" must be a port number \(0 to 65535\), got "80a"/],
    [{ SANDBOX_PORT: "70000" }, /"SANDBOX_PORT"/],
    [{ SANDBOX_DECOUPLED_DELAY_MS: "-1" }, /"SANDBOX_DECOUPLED_DELAY_MS"/],
    [{ SANDBOX_SCA_ORIGIN: "localhost:8081" }, /"SANDBOX_SCA_ORIGIN" must be an origin/],
    [{ SANDBOX_SCA_ORIGIN: "http://localhost:8081/sca" }, /got "http:\/\/localhost:8081\/sca"/],
  ];
  for (const [values, message] of cases) assert.throws(() => sandboxEnv(env(values)), message);
});

Deno.test("serveSandbox() makes scaRedirect links on the origin the scaOrigin function gives for its port", async () => {
  const sandbox = serveSandbox(0, { scaOrigin: localOrigin });
  try {
    const port = sandbox.server.addr.port;
    const created = await fetch(`${sandbox.url}/psd2/v1/consents`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ validUntil: "2030-01-01" }),
    });
    const body = await created.json();
    assert.match(body._links.scaRedirect.href, new RegExp(`^http://localhost:${port}/sca/`));
    const page = await fetch(body._links.scaRedirect.href);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /Authorise account access/);
  } finally {
    await sandbox.server.shutdown();
  }
});
