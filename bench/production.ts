/**
 * The production rows' fixture: config/production.example.yaml as a bank runs it
 * (`productionPolicyFile`), with what a bank has around it made here. A sandbox CA (the one
 * `deno task tpp:certificate` makes) is the only QTSP, and issues the TPP a QWAC (its transport
 * certificate, forwarded by the terminator in `X-SSL-Client-Cert`) and a QSealC (its signing
 * certificate), both naming a CRL this process serves, and puts the TPP in the register file. An
 * authorisation server's JWKS is served here too, and its token is bound to the QWAC (RFC 8705).
 *
 * The read is a balance read on a consent the gateway learnt the way it does in front of a bank:
 * created through it (signed, as the example requires) and its account list read, so that
 * `consent_scope` places the account; the payment initiation is signed with Digest and JWS by the
 * QSealC. What the gateway fetches of the CRL and the JWKS it fetches once and caches, as between
 * two refreshes in production.
 */
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { tppCertificate } from "../src/cli/tpp_certificate.ts";
import { loadSandboxCa, sandboxCrl } from "../src/pki/sandbox_ca.ts";
import { importIssued, type Issued, nginxHeader } from "../tests/support/pki.ts";
import {
  PAYMENT_BODY,
  PAYMENT_TARGET,
  type SignedPostFixture,
  signJws,
} from "../tests/support/signing.ts";
import { recurringConsent } from "../tests/support/consents.ts";
import { productionPolicyFile } from "./policies.ts";
import type { RequestShape } from "./signed_pool.ts";
import { ACCOUNT_ID, CONSENT_IBAN, CONSENT_ID } from "./upstream_answers.ts";

const ORG = "PSDGE-NBG-400001";
const ISSUER = "https://auth.bank.example";
/** The PSU's address as the TPP forwards it: public, as the example's `public_only` asks. */
const PSU_IP = "91.151.136.17";
/** The TPP's address, which the terminator appends to X-Forwarded-For. */
const TPP_IP = "91.151.136.40";

/** The production gateway's environment, policy, requests and what makes its consent known. */
export interface ProductionFixture {
  /** The policy file: the example with the bench's substitutions. */
  policy: string;
  /** The gateway's environment besides UPSTREAM_URL, PORT, METRICS_TOKEN and STORE_URL. */
  env: Record<string, string>;
  /** The balance read on the learnt consent (wrk adds a fresh X-Request-ID). */
  read: RequestShape;
  /** Signed payment initiations (QSealC, Digest, JWS) with the QWAC in the terminator's header. */
  signed: SignedPostFixture;
  /**
   * Creates the consent through the gateway on `port`, reads its account list, and makes sure
   * that a balance read is now placed (`consent_scope` counts it allowed, not unknown).
   */
  learnConsent(port: number, metricsToken: string): Promise<void>;
  close(): Promise<void>;
}

function b64url(bytes: ArrayBuffer): string {
  return new Uint8Array(bytes).toBase64({ alphabet: "base64url", omitPadding: true });
}

/** Headers every request of the TPP carries past the terminator. */
function terminated(qwac: Issued): Record<string, string> {
  return { "x-ssl-client-cert": nginxHeader(qwac), "x-forwarded-for": TPP_IP };
}

/** Mints the TPP's QWAC or QSealC from the sandbox CA in `caDir` (register entry included). */
async function mint(caDir: string, out: string, type: "qwac" | "qsealc", crlUrl: string) {
  await tppCertificate([
    ...["--org", ORG, "--roles", "PSP_PI,PSP_AI", "--type", type],
    ...["--out", out, "--ca-dir", caDir, "--crl-url", crlUrl],
  ]);
  return await importIssued(
    await Deno.readTextFile(`${out}/${type}.pem`),
    await Deno.readTextFile(`${out}/${type}.key`),
  );
}

/** A request of the TPP, signed by the QSealC: path and fetch init. */
async function signed(
  qsealc: Issued,
  qwac: Issued,
  target: string,
  body: string,
): Promise<{ path: string; init: RequestInit }> {
  const headers = await signJws(qsealc, {
    method: "POST",
    target,
    headers: {
      "x-request-id": crypto.randomUUID(),
      "content-type": "application/json",
      "psu-id": "PSU-1234",
      "psu-ip-address": PSU_IP,
      "tpp-redirect-uri": "https://tpp.example/return",
    },
    body,
  });
  return {
    path: target,
    init: { method: "POST", headers: { ...headers, ...terminated(qwac) }, body },
  };
}

/** Makes the CA, the certificates, the register, the CRL and JWKS server and the token. */
export async function productionFixture(): Promise<ProductionFixture> {
  const dir = await Deno.makeTempDir({ prefix: "bench-production-" });
  const caDir = `${dir}/ca`;
  let crl = new Uint8Array();
  const keys = await generateKeyPair("RS256");
  const jwks = { keys: [{ ...await exportJWK(keys.publicKey), kid: "bench", alg: "RS256" }] };
  const services = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const path = new URL(request.url).pathname;
    if (path === "/crl") {
      return new Response(crl, { headers: { "content-type": "application/pkix-crl" } });
    }
    if (path === "/jwks.json") return Response.json(jwks);
    return new Response(null, { status: 404 });
  });
  const origin = `http://127.0.0.1:${services.addr.port}`;
  const qwac = await mint(caDir, `${dir}/tpp`, "qwac", `${origin}/crl`);
  const qsealc = await mint(caDir, `${dir}/tpp`, "qsealc", `${origin}/crl`);
  crl = new Uint8Array(await sandboxCrl(await loadSandboxCa(caDir), [], 48));
  const caPem = await Deno.readTextFile(`${caDir}/qtsp-ca.pem`);
  const token = await new SignJWT({
    client_id: ORG,
    scope: "accounts",
    cnf: { "x5t#S256": b64url(await crypto.subtle.digest("SHA-256", qwac.cert.rawData)) },
  }).setProtectedHeader({ alg: "RS256", kid: "bench" }).setIssuer(ISSUER).setAudience("xs2a")
    .setSubject("PSU-1234").setIssuedAt().setExpirationTime("24h").sign(keys.privateKey);
  // The Authorization header of the reads; the example asks none of payment initiations (no
  // scopes on `pis`): a TPP on the redirect approach sends none.
  const authorization = `Bearer ${token}`;
  const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const closedPort = (closed.addr as Deno.NetAddr).port;
  closed.close();
  const env = {
    QTSP_CA_BUNDLE: `${caDir}/qtsp-ca.pem`,
    TPP_REGISTER_URL: `${caDir}/tpp_register.json`,
    OAUTH_JWKS_URL: `${origin}/jwks.json`,
    OAUTH_ISSUER: ISSUER,
    // JWTs only: nothing is introspected (the merchant groups' opaque tokens are not benched).
    OAUTH_INTROSPECTION_URL: `http://127.0.0.1:${closedPort}/introspect`,
    OAUTH_CLIENT_SECRET: "bench-introspection-secret",
  };
  const fixture: SignedPostFixture = {
    ca: await importIssued(caPem, await Deno.readTextFile(`${caDir}/qtsp-ca.key`)),
    tpp: qsealc,
    policy: "",
    request: () => signed(qsealc, qwac, PAYMENT_TARGET, PAYMENT_BODY),
  };
  const read: RequestShape = {
    method: "GET",
    path: `/v1/accounts/${ACCOUNT_ID}/balances`,
    headers: {
      "Consent-ID": CONSENT_ID,
      "PSU-IP-Address": PSU_IP,
      Authorization: authorization,
      ...terminated(qwac),
    },
  };
  return {
    policy: await productionPolicyFile(),
    env,
    read,
    signed: fixture,
    async learnConsent(port, metricsToken) {
      const gateway = `http://127.0.0.1:${port}`;
      const consent = JSON.stringify(recurringConsent({
        access: { accounts: [{ iban: CONSENT_IBAN }], balances: [{ iban: CONSENT_IBAN }] },
      }));
      const created = await signed(qsealc, qwac, "/v1/consents", consent);
      const answer = await fetch(gateway + created.path, created.init);
      const text = await answer.text();
      if (answer.status !== 201) throw new Error(`production consent: ${answer.status} ${text}`);
      const list = await fetch(`${gateway}/v1/accounts`, {
        headers: {
          ...read.headers,
          "X-Request-ID": crypto.randomUUID(),
        },
      });
      const accounts = await list.text();
      if (list.status !== 200) throw new Error(`production accounts: ${list.status} ${accounts}`);
      const balances = await fetch(gateway + read.path, {
        headers: { ...read.headers, "X-Request-ID": crypto.randomUUID() },
      });
      await balances.body?.cancel();
      const metrics = await fetch(`${gateway}/metrics`, {
        headers: { authorization: `Bearer ${metricsToken}` },
      });
      const allowed = (await metrics.text()).includes(
        'xs2a_consent_scope_total{op="getBalances",result="allowed"} 1\n',
      );
      if (balances.status !== 200 || !allowed) {
        throw new Error(`production read: ${balances.status}, the consent's scope not applied`);
      }
    },
    async close() {
      await services.shutdown();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}
