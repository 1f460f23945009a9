import assert from "node:assert/strict";
import { makeTestCa } from "../../../src/cli/test_ca.ts";
import { loadX509 } from "../../../src/pki/x509.ts";

Deno.test("makeTestCa() makes a CA certificate and an owner-only key once, then keeps them", async () => {
  const dir = await Deno.makeTempDir();
  try {
    assert.equal(await makeTestCa(dir), true);
    const pem = await Deno.readTextFile(`${dir}/qtsp-ca.pem`);
    const { X509Certificate, BasicConstraintsExtension } = await loadX509();
    const cert = new X509Certificate(pem);
    assert.equal(cert.getExtension(BasicConstraintsExtension)?.ca, true);
    assert.ok(await cert.verify({ signatureOnly: true }), "self-signed");
    assert.equal((await Deno.stat(`${dir}/qtsp-ca.key`)).mode! & 0o077, 0);
    // A second run (the compose service at every start) keeps the CA its certificates come from.
    assert.equal(await makeTestCa(dir), false);
    assert.equal(await Deno.readTextFile(`${dir}/qtsp-ca.pem`), pem);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
