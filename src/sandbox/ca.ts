/**
 * The sandbox CA's public side under `/sandbox/ca/`: its certificate and its CRL, signed anew at
 * each request (src/pki/sandbox_ca.ts), which the test certificates of `deno task
 * tpp:certificate` name as their CRL distribution point. With them a staging gateway runs the
 * production policy's revocation `hard` against the sandbox CA. The CA is read from its directory
 * (SANDBOX_CA_DIR, default `data/sandbox-ca`) at each request: one made after the sandbox started
 * is served too; without one both answer 404.
 *
 * - `GET /sandbox/ca/certificate`: the CA certificate (PEM), to give as QTSP_CA_BUNDLE.
 * - `GET /sandbox/ca/crl`: the CRL (DER, `application/pkix-crl`), valid for a day.
 * - `POST /sandbox/ca/certificates`: a test certificate issued over HTTP (ca_issuing.ts).
 */
import type { Context, Hono } from "hono";
import { loadSandboxCa, sandboxCrl } from "../pki/sandbox_ca.ts";
import { mountCaIssuing } from "./ca_issuing.ts";
import { SandboxError } from "./errors.ts";

/** The sandbox CA's directory unless configured. */
export const DEFAULT_CA_DIR = "data/sandbox-ca";

function noCa(dir: string): SandboxError {
  return new SandboxError(404, "RESOURCE_UNKNOWN", {
    text:
      `The sandbox CA has not been made yet in "${dir}": run deno task tpp:certificate to make it`,
  });
}

async function withCa<T>(dir: string, use: (ca: Awaited<ReturnType<typeof loadSandboxCa>>) => T) {
  try {
    return use(await loadSandboxCa(dir));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) throw noCa(dir);
    throw error;
  }
}

/** Mounts the CA's certificate, CRL and issuing endpoint. */
export function mountCa(app: Hono, dir: string) {
  mountCaIssuing(app, dir);
  app.get(
    "/sandbox/ca/certificate",
    (c: Context) =>
      withCa(dir, (ca) =>
        c.body(ca.cert.toString("pem") + "\n", 200, {
          "content-type": "application/x-pem-file",
        })),
  );
  app.get("/sandbox/ca/crl", async (c: Context) => {
    const crl = await withCa(dir, (ca) => sandboxCrl(ca));
    return c.body(crl, 200, {
      "content-type": "application/pkix-crl",
      "cache-control": "max-age=3600",
    });
  });
}
