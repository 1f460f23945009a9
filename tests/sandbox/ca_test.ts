import assert from "node:assert/strict";
import { makeTestCa } from "../../src/cli/test_ca.ts";
import { checkCrlSignature, parseCrl } from "../../src/pki/crl.ts";
import { loadSandboxCa } from "../../src/pki/sandbox_ca.ts";
import { createSandbox } from "../../src/sandbox/mod.ts";

Deno.test("the sandbox serves its CA's certificate and a CRL it signs, once the CA is made", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const app = createSandbox({ caDir: dir });
    const missing = await app.request("/sandbox/ca/crl");
    assert.equal(missing.status, 404);
    assert.match((await missing.json()).tppMessages[0].text, /tpp:certificate/);

    // Made after the sandbox started (the tester's first tpp:certificate): served at once.
    await makeTestCa(dir);
    const ca = await loadSandboxCa(dir);
    const certificate = await app.request("/sandbox/ca/certificate");
    assert.equal(certificate.status, 200);
    assert.equal(await certificate.text(), await Deno.readTextFile(`${dir}/qtsp-ca.pem`));
    const crl = await app.request("/sandbox/ca/crl");
    assert.equal(crl.status, 200);
    assert.equal(crl.headers.get("content-type"), "application/pkix-crl");
    const list = parseCrl(new Uint8Array(await crl.arrayBuffer()));
    await checkCrlSignature(list, ca.cert);
    assert.ok(list.nextUpdate! > Date.now());
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
