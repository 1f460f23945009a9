import assert from "node:assert/strict";
import { createCa, issue, nginxHeader } from "../../support/pki.ts";

const ROOT = new URL("../../../", import.meta.url);

/**
 * Runs `body` in a fresh process (nothing loaded by other tests) after the gateway's imports, in
 * the repository's directory; returns what it printed as JSON.
 */
async function fresh(body: string, env: Record<string, string> = {}) {
  const script = await Deno.makeTempFile({ suffix: ".ts" });
  try {
    await Deno.writeTextFile(
      script,
      `import { PIPELINE } from "${new URL("middleware/mod.ts", ROOT)}";
import { loadPolicyFile } from "${new URL("src/http/live_policy.ts", ROOT)}";
import { createApp } from "${new URL("src/http/app.ts", ROOT)}";
import { defaultServices, withPolicyClients } from "${new URL("src/policy/services.ts", ROOT)}";
import { memoryLogger } from "${new URL("src/lib/log.ts", ROOT)}";
/** True once reflect-metadata (which @peculiar/x509 needs first) has run. */
const x509Loaded = () => typeof (Reflect as { getMetadata?: unknown }).getMetadata === "function";
${body}`,
    );
    const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--config", new URL("deno.json", ROOT).pathname, "--allow-all", script],
      cwd: ROOT.pathname,
      env: { UPSTREAM_URL: "http://127.0.0.1:9", ...env },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(stdout);
    assert.equal(code, 0, new TextDecoder().decode(stderr));
    return JSON.parse(text.trim().split("\n").at(-1)!);
  } finally {
    await Deno.remove(script);
  }
}

Deno.test("the default policy starts without @peculiar/x509; the first certificate loads it", async () => {
  const ca = await createCa();
  const tpp = await issue(ca, { roles: ["PSP_AI"] });
  const seen = await fresh(
    `const { policy } = await loadPolicyFile("config/policy.yaml", PIPELINE);
const app = createApp({ policy, services: await withPolicyClients(policy, defaultServices({ log: memoryLogger() })) });
const atStart = x509Loaded();
const answer = await app.fetch(new Request("http://127.0.0.1/v1/consents/c-1/status", {
  headers: { "x-request-id": crypto.randomUUID(), "x-ssl-client-cert": Deno.env.get("CERT")! },
}), { remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 40000 } });
console.log(JSON.stringify({ atStart, afterCertificate: x509Loaded(), status: answer.status, body: await answer.text() }));`,
    { CERT: nginxHeader(tpp) },
  );
  assert.equal(seen.atStart, false, "no certificate library at start-up");
  assert.equal(seen.afterCertificate, true, "loaded for the request that brought a certificate");
  // The certificate was read (it chains to no anchor of the default policy), not refused as
  // unreadable, and the request did not fail in the gateway.
  assert.equal(seen.status, 401, seen.body);
  assert.match(seen.body, /CERTIFICATE_INVALID/);
  assert.doesNotMatch(seen.body, /cannot be read/);
});

Deno.test("loadPolicyFile() loads @peculiar/x509 first for a policy that names certificates", async () => {
  const ca = await createCa();
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/ca.pem`, ca.pem);
    await Deno.writeTextFile(
      `${dir}/policy.yaml`,
      `upstream:\n  url: \${UPSTREAM_URL}\ntrust:\n  anchors: [${dir}/ca.pem]\n`,
    );
    const seen = await fresh(
      `const { policy } = await loadPolicyFile("${dir}/policy.yaml", PIPELINE);
console.log(JSON.stringify({ anchors: policy.trust.anchors.length, loaded: x509Loaded() }));`,
    );
    assert.deepEqual(seen, { anchors: 1, loaded: true });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
