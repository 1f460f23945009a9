/**
 * `deno run --allow-read=<dir> --allow-write=<dir> src/cli/test_ca.ts <dir>`: a QTSP issuing CA for
 * trying the gateway (compose.yaml's `test-ca` service): `<dir>/qtsp-ca.pem`, the certificate to
 * give as QTSP_CA_BUNDLE, and `<dir>/qtsp-ca.key` (PKCS#8), to issue test TPP certificates from.
 * Made once: a directory that already holds a CA keeps it, so that certificates issued from it
 * stay valid across restarts. Never a production trust anchor.
 */
import "reflect-metadata";
import {
  BasicConstraintsExtension,
  KeyUsageFlags,
  KeyUsagesExtension,
  X509CertificateGenerator,
} from "@peculiar/x509";

const DAY = 86_400_000;

/** PEM of DER bytes under `label`. */
function pem(label: string, der: ArrayBuffer): string {
  const lines = new Uint8Array(der).toBase64().match(/.{1,64}/g)!.join("\n");
  return `-----BEGIN ${label}-----\n${lines}\n-----END ${label}-----\n`;
}

/**
 * Makes the CA in `dir` unless it holds one; resolves to whether it made one. The key file is
 * written first and only for its owner, the certificate last: a CA interrupted half-way is made
 * again.
 */
export async function makeTestCa(dir: string, name = "Test QTSP CA"): Promise<boolean> {
  const certFile = `${dir}/qtsp-ca.pem`;
  try {
    if ((await Deno.stat(certFile)).size > 0) return false;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const algorithm = {
    name: "RSASSA-PKCS1-v1_5",
    hash: "SHA-256",
    publicExponent: new Uint8Array([1, 0, 1]),
    modulusLength: 3072,
  };
  const keys = await crypto.subtle.generateKey(algorithm, true, ["sign", "verify"]);
  const cert = await X509CertificateGenerator.createSelfSigned({
    name: `CN=${name}, O=xs2a-edge test, C=GE`,
    keys,
    serialNumber: crypto.getRandomValues(new Uint8Array(8)).toHex().replace(/^[89a-f]/, "1"),
    notBefore: new Date(Date.now() - DAY),
    notAfter: new Date(Date.now() + 825 * DAY),
    extensions: [
      new BasicConstraintsExtension(true, undefined, true),
      new KeyUsagesExtension(KeyUsageFlags.keyCertSign | KeyUsageFlags.cRLSign, true),
    ],
  });
  const key = await crypto.subtle.exportKey("pkcs8", keys.privateKey);
  await Deno.writeTextFile(`${dir}/qtsp-ca.key`, pem("PRIVATE KEY", key), { mode: 0o600 });
  await Deno.writeTextFile(certFile, cert.toString("pem") + "\n", { mode: 0o644 });
  return true;
}

if (import.meta.main) {
  const dir = Deno.args[0];
  if (!dir) {
    console.error(
      "usage: deno run --allow-read=<dir> --allow-write=<dir> src/cli/test_ca.ts <dir>",
    );
    Deno.exit(2);
  }
  const made = await makeTestCa(dir);
  console.log(
    JSON.stringify({
      time: new Date().toISOString(),
      level: "info",
      msg: made ? "test CA made" : "test CA kept",
      file: `${dir}/qtsp-ca.pem`,
    }),
  );
}
