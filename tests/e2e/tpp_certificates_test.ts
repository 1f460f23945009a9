/**
 * The smoke test of a bank's staging: `deno task start` (the sandbox bank and the gateway) with
 * config/production.example.yaml as it ships, but for its placeholders (the TLS terminator is the
 * test's client on 127.0.0.1), the sandbox CA as the only trust anchor, the sandbox's TPP register
 * and Redis. A TPP with a QWAC and a QSealC minted by `deno task tpp:certificate` and a payment
 * initiation signed by `deno task tpp:sign` gets the sandbox's 201 through every production
 * check (QC types, key usages, revocation `hard` against the sandbox's CRL, the register, Digest
 * and JWS); the same TPP's certificates from another CA get 401.
 */
import assert from "node:assert/strict";
import { readUntil, startMain } from "../support/main_process.ts";
import { redisUrl, uniquePrefix, WITHOUT_REDIS } from "../support/redis.ts";
import { closedPort } from "../support/upstream.ts";

const ORG = "PSDGE-NBG-777001";
const PAYMENT = {
  debtorAccount: { iban: "GE42SB0000000101904917" },
  instructedAmount: { currency: "GEL", amount: "12.50" },
  creditorAccount: { iban: "GE29NB0000000101904917" },
  creditorName: "Tbilisi Energy",
};

/** `deno task <args>` to its end; asserts it succeeded and resolves to its stdout. */
async function task(args: string[], env: Record<string, string> = {}): Promise<string> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", ...args],
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  assert.equal(output.code, 0, decode(output.stderr));
  return decode(output.stdout);
}

/** Mints a QWAC and a QSealC of {@link ORG} from the CA in `caDir` into `out`. */
async function mint(caDir: string, out: string, sandboxPort: number) {
  for (const type of ["qwac", "qsealc"]) {
    const printed = JSON.parse(
      await task(
        [
          "tpp:certificate",
          ...["--org", ORG, "--roles", "PSP_PI,PSP_AI", "--type", type],
          ...["--out", out, "--ca-dir", caDir],
        ],
        { SANDBOX_PORT: String(sandboxPort) },
      ),
    );
    assert.equal(printed.certificate, `${out}/${type}.pem`);
  }
}

/** The production example with its terminators' placeholders replaced by 127.0.0.1. */
async function stagingPolicy(dir: string): Promise<string> {
  const text = await Deno.readTextFile("config/production.example.yaml");
  const changed = text.replace(/^( {2}terminators: )\[[^\]]*\]/m, "$1[127.0.0.1/32]");
  assert.notEqual(changed, text);
  const file = `${dir}/staging.yaml`;
  await Deno.writeTextFile(file, changed);
  return file;
}

/** The headers `tpp:sign` prints, as a record. */
function headersOf(printed: string): Record<string, string> {
  return Object.fromEntries(
    printed.trim().split("\n").map((line) => {
      const colon = line.indexOf(": ");
      return [line.slice(0, colon), line.slice(colon + 2)];
    }),
  );
}

Deno.test({
  name:
    "a TPP with minted test certificates pays through the production policy; another CA's are refused",
  ignore: WITHOUT_REDIS,
}, async () => {
  const dir = await Deno.makeTempDir();
  const sandboxPort = closedPort();
  const port = closedPort();
  const caDir = `${dir}/sandbox-ca`;
  await mint(caDir, `${dir}/tpp`, sandboxPort);
  await mint(`${dir}/other-ca`, `${dir}/rogue`, sandboxPort);
  const body = `${dir}/payment.json`;
  await Deno.writeTextFile(body, JSON.stringify(PAYMENT));

  const env: Record<string, string> = {
    ...Deno.env.toObject(),
    PORT: String(port),
    SANDBOX_PORT: String(sandboxPort),
    SANDBOX_CA_DIR: caDir,
    STORE_URL: redisUrl(),
    QTSP_CA_BUNDLE: `${caDir}/qtsp-ca.pem`,
    TPP_REGISTER_URL: `${caDir}/tpp_register.json`,
    METRICS_TOKEN: "staging-metrics-token-0123456789abcdef",
    // Payment initiations take no bearer token in the production example (only groups with
    // scopes and the merchant groups require one): nothing reaches the authorisation server.
    OAUTH_JWKS_URL: `http://127.0.0.1:${closedPort()}/jwks.json`,
    OAUTH_ISSUER: "https://auth.bank.example",
    OAUTH_INTROSPECTION_URL: `http://127.0.0.1:${closedPort()}/introspect`,
    OAUTH_CLIENT_SECRET: "staging-introspection-secret",
  };
  delete env.UPSTREAM_URL;
  delete env.GATEWAY_POLICY;
  const policy = await stagingPolicy(dir);
  // The production example's store prefix, made unique so that runs do not share X-Request-IDs.
  await Deno.writeTextFile(
    policy,
    (await Deno.readTextFile(policy)).replace('prefix: "xs2a:"', `prefix: "${uniquePrefix()}"`),
  );
  const main = await startMain(["--policy", policy], {
    env,
    clearEnv: true,
    entry: "src/sandbox/start.ts",
  });
  try {
    const gateway = `http://127.0.0.1:${port}`;
    const pay = async (from: string, scheme: string, signer = from) => {
      const printed = await task([
        "tpp:sign",
        ...["--cert", `${dir}/${signer}/qsealc.pem`, "--key", `${dir}/${signer}/qsealc.key`],
        ...["--scheme", scheme, "--method", "POST", "--path", "/v1/payments/domestic"],
        ...["--body", body, "--transport", `${dir}/${from}/qwac.pem`],
        ...["--header", "PSU-ID=PSU-OK", "--header", "PSU-IP-Address=91.151.136.17"],
        ...["--header", "TPP-Redirect-URI=https://tpp.example/ok"],
      ]);
      const response = await fetch(`${gateway}/v1/payments/domestic`, {
        method: "POST",
        headers: headersOf(printed),
        body: await Deno.readFile(body),
      });
      return { status: response.status, body: await response.json() };
    };

    const paid = await pay("tpp", "jws");
    assert.equal(paid.status, 201, JSON.stringify(paid.body));
    assert.equal(paid.body.transactionStatus, "RCVD");
    assert.match(paid.body._links.self.href, /^\/v1\/payments\/domestic\//);
    // The production example takes JWS only (http_signature is off there).
    const cavage = await pay("tpp", "http");
    assert.equal(cavage.status, 401, JSON.stringify(cavage.body));
    assert.equal(cavage.body.tppMessages[0].code, "SIGNATURE_MISSING");

    // Another CA's QWAC (the same TPP, the same roles): not a certificate this bank trusts.
    const rogue = await pay("rogue", "jws");
    assert.equal(rogue.status, 401, JSON.stringify(rogue.body));
    assert.equal(rogue.body.tppMessages[0].code, "CERTIFICATE_INVALID");
    assert.equal(rogue.body.tppMessages[0].path, "X-SSL-Client-Cert");
    // The trusted QWAC with a signature sealed by another CA's QSealC.
    const sealed = await pay("tpp", "jws", "rogue");
    assert.equal(sealed.status, 401, JSON.stringify(sealed.body));
    assert.equal(sealed.body.tppMessages[0].code, "CERTIFICATE_INVALID");
    assert.equal(sealed.body.tppMessages[0].path, "x-jws-signature");

    // What reached the bank: the payment, none of the refused requests.
    const log = await fetch(`http://127.0.0.1:${sandboxPort}/sandbox/requests?limit=10`);
    const { requests } = await log.json();
    const payments = requests.filter((r: { target: string }) => r.target.includes("/payments/"));
    assert.equal(
      payments.length,
      1,
      JSON.stringify(requests.map((r: { target: string }) => r.target)),
    );
  } finally {
    main.child.kill("SIGTERM");
    await readUntil(main);
    await main.child.status;
    await main.child.stdout.cancel();
    await Deno.remove(dir, { recursive: true });
  }
});
