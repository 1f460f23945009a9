/**
 * A real certificate authority for revocation tests, made by openssl in a temporary directory:
 * its CA database (`index.txt`), CRLs from `openssl ca -gencrl`, and OCSP responders
 * (`openssl ocsp -index ... -port ...`) started and stopped by the test. TPP certificates are
 * issued by tests/support/pki.ts with the CA's (imported) key, and entered in the database with
 * `openssl ca -valid` / `-revoke`.
 */
import { importIssued, type Issued } from "./pki.ts";

/** A running OCSP responder. */
export interface Responder extends AsyncDisposable {
  url: string;
  /** Stops it (the responder is then down: connections are refused). */
  close(): Promise<void>;
}

/** The test CA. */
export interface OpensslCa extends AsyncDisposable {
  dir: string;
  ca: Issued;
  /** Enters a certificate as valid in the CA database. */
  valid(cert: Issued): Promise<void>;
  /** Enters a certificate as revoked (key compromise) in the CA database. */
  revoke(cert: Issued): Promise<void>;
  /** A CRL of the database (`openssl ca -gencrl`), DER, valid for `hours`. */
  crl(hours?: number): Promise<Uint8Array>;
  /**
   * Starts `openssl ocsp` on a free port of 127.0.0.1. `signer`: a delegated responder
   * certificate with OCSPSigning (default), the CA itself, or a stranger's self-signed
   * certificate; `minutes`: nextUpdate (default 60).
   */
  responder(options?: {
    signer?: "delegated" | "ca" | "stranger";
    minutes?: number;
    port?: number;
  }): Promise<Responder>;
  close(): Promise<void>;
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

async function openssl(args: string[], cwd: string): Promise<void> {
  const { code, stderr } = await new Deno.Command("openssl", {
    args,
    cwd,
    stdout: "null",
    stderr: "piped",
  }).output();
  if (code !== 0) {
    throw new Error(`openssl ${args[0]} failed: ${new TextDecoder().decode(stderr)}`);
  }
}

/**
 * Waits for `openssl ocsp` to say it listens (a probe connection would not do: the responder
 * takes an empty connection for a request and stops answering), then drains its output.
 */
async function waitForResponder(stderr: ReadableStream<Uint8Array>, port: number): Promise<void> {
  const reader = stderr.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const timer = setTimeout(() => reader.cancel(), 10_000);
  try {
    while (!text.includes("waiting for OCSP client connections")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`openssl ocsp did not listen on port ${port}: ${text}`);
      text += value;
    }
  } finally {
    clearTimeout(timer);
  }
  (async () => {
    while (!(await reader.read().catch(() => ({ done: true }))).done) {
      // Drained, so that the responder never blocks on a full pipe.
    }
  })();
}

const CONFIG = `
[ ca ]
default_ca = test

[ test ]
dir = .
database = ./index.txt
new_certs_dir = ./issued
certificate = ./ca.pem
private_key = ./ca.key
serial = ./serial
crlnumber = ./crlnumber
default_md = sha256
default_crl_days = 1
policy = any
unique_subject = no

[ any ]
commonName = optional

[ req ]
distinguished_name = dn
prompt = no

[ dn ]
CN = Test OpenSSL QTSP CA
O = Test QTSP
C = GE

[ v3_ca ]
basicConstraints = critical,CA:true
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash

[ ocsp_signer ]
basicConstraints = CA:false
keyUsage = critical,digitalSignature
extendedKeyUsage = OCSPSigning
`;

/** Makes a CA with openssl in a new temporary directory (removed by `close`). */
export async function opensslCa(name = "Test OpenSSL QTSP CA"): Promise<OpensslCa> {
  const dir = await Deno.makeTempDir({ prefix: "xs2a-ca-" });
  await Deno.mkdir(`${dir}/issued`);
  await Deno.writeTextFile(`${dir}/openssl.cnf`, CONFIG.replace("Test OpenSSL QTSP CA", name));
  await Deno.writeTextFile(`${dir}/index.txt`, "");
  await Deno.writeTextFile(`${dir}/serial`, "1000\n");
  await Deno.writeTextFile(`${dir}/crlnumber`, "1000\n");
  const run = (args: string[]) => openssl(args, dir);
  const cnf = ["-config", "openssl.cnf"];
  await run([
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    "-days",
    "3650",
    ...cnf,
    "-extensions",
    "v3_ca",
  ]);
  // The delegated responder: issued by the CA, with OCSPSigning.
  await run([
    "req",
    "-new",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "ocsp.key",
    "-out",
    "ocsp.csr",
    "-subj",
    "/CN=Test OCSP Responder/O=Test QTSP/C=GE",
  ]);
  await run([
    "x509",
    "-req",
    "-in",
    "ocsp.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-set_serial",
    "0x0C5B",
    "-days",
    "365",
    "-extfile",
    "openssl.cnf",
    "-extensions",
    "ocsp_signer",
    "-out",
    "ocsp.pem",
  ]);
  // A stranger: a self-signed certificate with OCSPSigning, under another name.
  await run([
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "stranger.key",
    "-out",
    "stranger.pem",
    "-days",
    "365",
    "-subj",
    "/CN=Stranger OCSP Responder/O=Nobody/C=GE",
    "-addext",
    "extendedKeyUsage=OCSPSigning",
  ]);
  const ca = await importIssued(
    await Deno.readTextFile(`${dir}/ca.pem`),
    await Deno.readTextFile(`${dir}/ca.key`),
  );
  const responders = new Set<Responder>();
  // Module-level CAs of a test file are removed when the process ends.
  const removeDir = () => Deno.removeSync(dir, { recursive: true });
  globalThis.addEventListener("unload", removeDir);

  async function enter(cert: Issued, revoke: boolean) {
    const file = `${crypto.randomUUID()}.pem`;
    await Deno.writeTextFile(`${dir}/${file}`, cert.pem);
    await run(
      revoke
        ? ["ca", ...cnf, "-revoke", file, "-crl_reason", "keyCompromise"]
        : ["ca", ...cnf, "-valid", file],
    );
  }

  const close = async () => {
    for (const responder of [...responders]) await responder.close();
    globalThis.removeEventListener("unload", removeDir);
    await Deno.remove(dir, { recursive: true });
  };

  return {
    dir,
    ca,
    valid: (cert) => enter(cert, false),
    revoke: (cert) => enter(cert, true),
    async crl(hours = 24) {
      await run(["ca", ...cnf, "-gencrl", "-crlhours", String(hours), "-out", "crl.pem"]);
      await run(["crl", "-in", "crl.pem", "-outform", "DER", "-out", "crl.der"]);
      return await Deno.readFile(`${dir}/crl.der`);
    },
    async responder(options = {}) {
      const port = options.port ?? freePort();
      const signer = options.signer ?? "delegated";
      const [cert, key] = signer === "ca"
        ? ["ca.pem", "ca.key"]
        : signer === "stranger"
        ? ["stranger.pem", "stranger.key"]
        : ["ocsp.pem", "ocsp.key"];
      const child = new Deno.Command("openssl", {
        args: [
          "ocsp",
          "-index",
          "index.txt",
          "-port",
          String(port),
          "-rsigner",
          cert,
          "-rkey",
          key,
          "-CA",
          "ca.pem",
          "-nmin",
          String(options.minutes ?? 60),
          "-ignore_err",
        ],
        cwd: dir,
        stdout: "null",
        stderr: "piped",
      }).spawn();
      await waitForResponder(child.stderr, port);
      let closed = false;
      const responder: Responder = {
        url: `http://127.0.0.1:${port}`,
        async close() {
          if (closed) return;
          closed = true;
          responders.delete(responder);
          child.kill("SIGTERM");
          await child.status;
        },
        [Symbol.asyncDispose]: () => responder.close(),
      };
      responders.add(responder);
      return responder;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** A small HTTP server of the test: serves `body` (changeable) and counts requests. */
export interface TestServer extends AsyncDisposable {
  url: string;
  /** Requests received. */
  hits: number;
  close(): Promise<void>;
}

/** Serves bytes (a CRL) over HTTP on 127.0.0.1; `body()` is read at each request. */
export function serveBytes(body: () => Uint8Array): TestServer {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () => {
    state.hits++;
    return new Response(body() as BodyInit, {
      headers: { "content-type": "application/pkix-crl" },
    });
  });
  const close = () => server.shutdown();
  const state: TestServer = {
    url: `http://127.0.0.1:${server.addr.port}`,
    hits: 0,
    close,
    [Symbol.asyncDispose]: close,
  };
  return state;
}

/** Forwards POSTs to `target` (an OCSP responder) and counts them. */
export function countingProxy(target: () => string): TestServer {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      state.hits++;
      try {
        const answer = await fetch(target(), {
          method: "POST",
          headers: { "content-type": "application/ocsp-request" },
          body: await request.arrayBuffer(),
        });
        return new Response(await answer.arrayBuffer(), { status: answer.status });
      } catch {
        return new Response("responder down", { status: 502 });
      }
    },
  );
  const close = () => server.shutdown();
  const state: TestServer = {
    url: `http://127.0.0.1:${server.addr.port}`,
    hits: 0,
    close,
    [Symbol.asyncDispose]: close,
  };
  return state;
}
