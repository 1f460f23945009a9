import assert from "node:assert/strict";

const ROOT = new URL("../../../", import.meta.url);

async function openssl(args: string[], cwd: string) {
  const { code, stderr } = await new Deno.Command("openssl", { args, cwd, stderr: "piped" })
    .output();
  assert.equal(code, 0, new TextDecoder().decode(stderr));
}

/** A CA and a certificate for localhost it issued, made by openssl in `dir`. */
async function opensslServerCertificate(dir: string) {
  await openssl([
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    "-days",
    "1",
    "-subj",
    "/CN=Test core CA",
  ], dir);
  await openssl([
    "req",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
    "-keyout",
    "server.key",
    "-out",
    "server.csr",
    "-subj",
    "/CN=localhost",
  ], dir);
  await Deno.writeTextFile(
    `${dir}/server.ext`,
    "basicConstraints=CA:FALSE\nsubjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n",
  );
  await openssl([
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "server.pem",
    "-days",
    "1",
    "-extfile",
    "server.ext",
  ], dir);
  return {
    caFile: `${dir}/ca.pem`,
    cert: await Deno.readTextFile(`${dir}/server.pem`),
    key: await Deno.readTextFile(`${dir}/server.key`),
  };
}

Deno.test("createUpstream() on Deno Deploy speaks http1 over Deno.connectTls to an https core", async () => {
  const dir = await Deno.makeTempDir();
  const seen: { path: string; userAgent: string | null }[] = [];
  const tls = await opensslServerCertificate(dir);
  const core = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert: tls.cert, key: tls.key, onListen: () => {} },
    (request) => {
      seen.push({
        path: new URL(request.url).pathname,
        userAgent: request.headers.get("user-agent"),
      });
      return Response.json({ ok: true });
    },
  );
  try {
    // As on Deploy: DENO_DEPLOYMENT_ID set, Deno.connect to port 443 refused, connectTls allowed
    // (counted); the runtime's fetch must not be used. DENO_CERT trusts the core's CA.
    const script = `
      import { PIPELINE } from "${new URL("middleware/mod.ts", ROOT)}";
      import { parsePolicy } from "${new URL("src/policy/load.ts", ROOT)}";
      import { createUpstream } from "${new URL("src/upstream/mod.ts", ROOT)}";
      const connect = Deno.connect;
      Object.defineProperty(Deno, "connect", { value: (options) => {
        if (options.port === 443) throw new Error("Deno Deploy refuses plain TCP to port 443");
        return connect(options);
      } });
      let tlsConnections = 0;
      const connectTls = Deno.connectTls;
      Object.defineProperty(Deno, "connectTls", { value: (options) => {
        tlsConnections++;
        return connectTls(options);
      } });
      const origin = "https://localhost:${core.addr.port}";
      const policy = parsePolicy("p.yaml", "upstream:\\n  url: " + origin + "\\n", { ...PIPELINE });
      const upstream = createUpstream(policy.upstream, () => {
        throw new Error("the runtime's fetch was used");
      });
      const answer = await upstream.send({ method: "GET", origin, target: "/psd2/v1/accounts",
        headers: [], timeoutMs: 5000, maxBytes: 1000 });
      upstream.close();
      console.log(JSON.stringify({ client: policy.upstream.client, status: answer.status,
        body: new TextDecoder().decode(answer.body), tlsConnections }));`;
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["eval", "--config", new URL("deno.json", ROOT).pathname, script],
      env: { DENO_DEPLOYMENT_ID: "test-deployment", DENO_CERT: tls.caFile },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(output.stderr);
    assert.equal(output.code, 0, stderr);
    assert.deepEqual(JSON.parse(new TextDecoder().decode(output.stdout)), {
      client: "http1",
      status: 200,
      body: '{"ok":true}',
      tlsConnections: 1,
    });
    // The gateway's own client sends what it forwards, no User-Agent of its own (fetch would).
    assert.deepEqual(seen, [{ path: "/psd2/v1/accounts", userAgent: null }]);
  } finally {
    await core.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});
