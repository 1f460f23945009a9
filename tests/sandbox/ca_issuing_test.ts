import assert from "node:assert/strict";
import { makeTestCa } from "../../src/cli/test_ca.ts";
import { parseCertificate } from "../../src/pki/certificate.ts";
import { loadX509 } from "../../src/pki/x509.ts";
import { createSandbox } from "../../src/sandbox/mod.ts";
import { closedPort } from "../support/upstream.ts";

const { CRLDistributionPointsExtension } = await loadX509();

function issue(app: ReturnType<typeof createSandbox>, body: unknown, headers = {}) {
  return app.request("http://127.0.0.1:18081/sandbox/ca/certificates", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

Deno.test("POST /sandbox/ca/certificates issues a test certificate and its key from the sandbox CA", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const app = createSandbox({ caDir: dir });
    const wanted = { type: "qsealc", organisationId: "PSDGE-NBG-777002", roles: ["PSP_AI"] };
    const early = await issue(app, wanted);
    assert.equal(early.status, 404, "no CA yet");
    await early.body?.cancel();

    await makeTestCa(dir);
    const response = await issue(app, wanted);
    assert.equal(response.status, 201);
    const body = await response.json();
    const info = await parseCertificate(body.certificate);
    assert.deepEqual(info.qcTypes, ["QSealC"]);
    assert.deepEqual(info.roles, ["PSP_AI"]);
    assert.equal(info.organizationId, "PSDGE-NBG-777002");
    assert.match(body.key, /^-----BEGIN PRIVATE KEY-----/);
    const caPem = await Deno.readTextFile(`${dir}/qtsp-ca.pem`);
    const { X509Certificate } = await loadX509();
    assert.ok(await info.cert.verify({ publicKey: new X509Certificate(caPem).publicKey }));
    // The CRL of the sandbox the request came to.
    const cdp = info.cert.getExtension(CRLDistributionPointsExtension);
    assert.equal(
      cdp?.distributionPoints[0].distributionPoint?.fullName?.[0].uniformResourceIdentifier,
      "http://127.0.0.1:18081/sandbox/ca/crl",
    );
    const register = JSON.parse(await Deno.readTextFile(`${dir}/tpp_register.json`));
    assert.deepEqual(register.entries.map((e: { id: string }) => e.id), ["PSDGE-NBG-777002"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("POST /sandbox/ca/certificates names the field it cannot use, and takes no other site's post", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await makeTestCa(dir);
    const app = createSandbox({ caDir: dir });
    const base = { type: "QWAC", organisationId: "PSDGE-NBG-777002", roles: ["PSP_PI"] };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...base, type: "QESig" }, "type"],
      [{ ...base, organisationId: "GE-777002" }, "organisationId"],
      [{ ...base, roles: ["PSP_XX"] }, "roles.0"],
      [{ ...base, roles: [] }, "roles"],
      [{ ...base, days: 0 }, "days"],
      [{ ...base, colour: "red" }, ""],
    ];
    for (const [body, path] of cases) {
      const response = await issue(app, body);
      assert.equal(response.status, 400, JSON.stringify(body));
      const [message] = (await response.json()).tppMessages;
      assert.equal(message.code, "FORMAT_ERROR");
      assert.equal(message.path, path, message.text);
    }
    const crossSite = await issue(app, base, { "sec-fetch-site": "cross-site" });
    assert.equal(crossSite.status, 403);
    await crossSite.body?.cancel();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deno task sandbox, which may not write, issues the certificate and says the register was not written", async () => {
  const dir = await Deno.makeTempDir();
  await makeTestCa(dir);
  const port = closedPort();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "sandbox"],
    env: { SANDBOX_PORT: String(port), SANDBOX_CA_DIR: dir },
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const stdout = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  try {
    let said = "";
    while (!said.includes("listening")) {
      const { value, done } = await stdout.read();
      if (done) break;
      said += value;
    }
    const response = await fetch(`http://127.0.0.1:${port}/sandbox/ca/certificates`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ type: "QWAC", organisationId: "PSDGE-NBG-1", roles: ["PSP_PI"] }),
    });
    assert.equal(response.status, 201);
    const body = await response.json();
    assert.match(body.certificate, /^-----BEGIN CERTIFICATE-----/);
    assert.match(body.registerNotWritten, /may not write/);
    await assert.rejects(() => Deno.stat(`${dir}/tpp_register.json`), Deno.errors.NotFound);
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await stdout.cancel();
    await Deno.remove(dir, { recursive: true });
  }
});
