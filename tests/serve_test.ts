import assert from "node:assert/strict";
import { closedPort, startUpstream } from "./support/upstream.ts";
import { serveArgs } from "./support/main_process.ts";
import { retryUntil } from "./support/wait.ts";
import { redisUrl, WITHOUT_REDIS } from "./support/redis.ts";

/** A port free now, for a server of the test's own. */
const freePort = closedPort;

/** Waits (at most 20 s, which only bounds a failing run) until `url` answers at all. */
function waitFor(url: string): Promise<void> {
  return retryUntil(async () => {
    const response = await fetch(url, { signal: AbortSignal.timeout(5000) });
    await response.body?.cancel();
  }, 20_000);
}

/**
 * The default policy as a file, with `store` lines added to its `store` section and, given
 * `psuLimit`, a rate limit of that many requests per PSU-ID an hour in place of the per-TPP one.
 */
async function defaultPolicyWith(
  options: { store?: string; psuLimit?: number },
): Promise<string> {
  let text = await Deno.readTextFile("config/policy.yaml");
  for (
    const [pattern, replacement] of [
      [/^store:\n/m, options.store && `store:\n${options.store}`],
      [
        /per_tpp:\n(\s+)key: \[tpp\]\n\s+limit: 100000\n\s+window: 1m/,
        // An hour's window: no request comes back within a test's time.
        options.psuLimit &&
        `per_psu:\n$1key: [psu_id]\n$1limit: ${options.psuLimit}\n$1window: 1h`,
      ],
    ] as const
  ) {
    if (!replacement) continue;
    const changed = text.replace(pattern, replacement);
    assert.notEqual(changed, text, String(pattern));
    text = changed;
  }
  const file = await Deno.makeTempFile({ suffix: ".yaml" });
  await Deno.writeTextFile(file, text);
  return file;
}

/** An echo upstream as a process of its own, as the gateway's workers are. */
async function startEchoUpstream() {
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-net", "tests/support/echo_upstream.ts", String(port)],
    stdout: "null",
    stderr: "inherit",
  }).spawn();
  const close = async () => {
    child.kill("SIGTERM");
    await child.status;
  };
  try {
    await waitFor(`http://127.0.0.1:${port}/`);
  } catch (error) {
    await close();
    throw error;
  }
  return { url: `http://127.0.0.1:${port}`, close };
}

/**
 * `deno serve --parallel` of serve.ts with DENO_JOBS workers (two unless `env` says otherwise), in
 * front of an echo upstream process (this test process only calls). `task`: through
 * `deno task serve`, on PORT.
 */
async function startServe(env: Record<string, string> = {}, options: { task?: boolean } = {}) {
  const upstream = await startEchoUpstream();
  const port = freePort();
  const args = options.task ? ["task", "serve"] : serveArgs(port);
  const child = new Deno.Command(Deno.execPath(), {
    args,
    env: { UPSTREAM_URL: upstream.url, DENO_JOBS: "2", PORT: String(port), ...env },
    stdout: "null",
    stderr: "null",
  }).spawn();
  const url = `http://127.0.0.1:${port}`;
  const close = async () => {
    await stop(child);
    await upstream.close();
  };
  try {
    // The port answers once the first worker listens; the other may still be starting.
    await waitFor(`${url}/healthz`);
  } catch (error) {
    await close();
    throw error;
  }
  return { url, port, [Symbol.asyncDispose]: close };
}

/** `count` requests for one PSU at once, each on a connection of its own: their answers. */
function requestsOfOnePsu(url: string, count: number, psu = `psu-${crypto.randomUUID()}`) {
  return Promise.all(
    Array.from({ length: count }, () =>
      fresh(`${url}/v1/consents/c-1/status`, {
        headers: { "x-request-id": crypto.randomUUID(), "psu-id": psu },
      })),
  );
}

Deno.test("serve.ts runs under deno serve --parallel and answers through every worker", async () => {
  // A memory store per worker counts each worker's requests apart: more than 4 of one PSU's
  // requests pass a limit of 4 only when more than one worker answered.
  const policy = await defaultPolicyWith({ store: "  allow_per_instance: true\n", psuLimit: 4 });
  try {
    await using serve = await startServe({ GATEWAY_POLICY: policy });
    // The kernel hands a connection to any worker that listens, and the second may still be
    // starting: requests go on until a fifth passes, which one worker never lets through (30 s
    // only bound a failing run).
    const psu = `psu-${crypto.randomUUID()}`;
    const answers: Awaited<ReturnType<typeof fresh>>[] = [];
    const passed = () => answers.filter((a) => a.status === 200);
    for (const until = Date.now() + 30_000; passed().length <= 4 && Date.now() < until;) {
      answers.push(...await requestsOfOnePsu(serve.url, 4, psu));
    }
    const statuses = answers.map((a) => a.status).join(" ");
    assert.ok(passed().length > 4, `one worker answered all: ${statuses}`);
    assert.ok(passed().length <= 8, `a worker passed more than its limit: ${statuses}`);
    assert.equal(answers.length - passed().length, answers.filter((a) => a.status === 429).length);
    for (const answer of passed()) {
      // The upstream's own echo: the request reached it, on the upstream path.
      assert.deepEqual(JSON.parse(answer.text), {
        method: "GET",
        path: "/psd2/v1/consents/c-1/status",
      });
    }
  } finally {
    await Deno.remove(policy);
  }
});

Deno.test({
  name: "serve.ts decides with the policy's Redis store, so a limit holds across its workers",
  ignore: WITHOUT_REDIS,
  async fn() {
    const policy = await defaultPolicyWith({ psuLimit: 4 });
    try {
      await using serve = await startServe({
        GATEWAY_POLICY: policy,
        STORE_KIND: "redis",
        STORE_URL: redisUrl(),
      });
      const statuses = (await requestsOfOnePsu(serve.url, 12)).map((a) => a.status);
      // A memory store per worker would let each worker pass 4.
      assert.equal(statuses.filter((s) => s === 200).length, 4, statuses.join(" "));
      assert.equal(statuses.filter((s) => s === 429).length, 8, statuses.join(" "));
    } finally {
      await Deno.remove(policy);
    }
  },
});

/** Whether the process has exited within `ms`. */
async function exitsWithin(child: Deno.ChildProcess, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => timer = setTimeout(() => resolve(false), ms));
  const exited = await Promise.race([child.status.then(() => true), late]);
  clearTimeout(timer);
  return exited;
}

/**
 * Stops `deno serve --parallel`. A worker still starting (loading the policy) when SIGTERM arrives
 * misses it and serves on (seen in about one run of four with the default policy): the signal is
 * sent again once it has had time to start, and the process killed if even that does not end it.
 */
async function stop(child: Deno.ChildProcess) {
  child.kill("SIGTERM");
  if (await exitsWithin(child, 5000)) return;
  child.kill("SIGTERM");
  if (await exitsWithin(child, 10_000)) return;
  child.kill("SIGKILL");
  await child.status;
  assert.fail("deno serve --parallel did not stop on SIGTERM, twice");
}

const denort = Deno.env.get("DENORT_BIN");

Deno.test({
  name: "deno task compile builds a binary that serves a flow with --policy and stops cleanly",
  // deno compile needs the denort runtime, downloaded from dl.deno.land or given as DENORT_BIN;
  // neither exists on machines without internet access.
  ignore: !denort,
  async fn() {
    const out = await Deno.makeTempDir();
    const built = await new Deno.Command(Deno.execPath(), {
      args: [
        "compile",
        "--allow-all",
        "--include",
        "config",
        "--output",
        `${out}/xs2a-edge`,
        "main.ts",
      ],
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.equal(built.code, 0, new TextDecoder().decode(built.stderr));
    await using upstream = startUpstream();
    const port = freePort();
    const child = new Deno.Command(`${out}/xs2a-edge`, {
      args: ["--policy", "config/policy.yaml"],
      env: { UPSTREAM_URL: upstream.url, PORT: String(port) },
      stdout: "null",
      stderr: "null",
    }).spawn();
    await waitFor(`http://127.0.0.1:${port}/healthz`);
    const response = await fetch(`http://127.0.0.1:${port}/v1/consents/c-1/status`, {
      headers: { "x-request-id": crypto.randomUUID() },
    });
    assert.equal(response.status, 200);
    await response.body?.cancel();
    child.kill("SIGTERM");
    assert.equal((await child.status).code, 0);
  },
});

/** Waits until a scrape of `url` adds up both workers (60 s at the most: a bound, no verdict). */
async function bothWorkersUp(url: string, init: RequestInit) {
  let text = "";
  for (const started = Date.now(); Date.now() - started < 60_000;) {
    text = (await fresh(url, init)).text;
    if (text.includes("\nxs2a_workers 2\n")) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the second worker never answered a scrape: ${text.slice(-200)}`);
}

/** A request on a connection of its own, so that the kernel spreads them over the workers. */
async function fresh(url: string, init: RequestInit = {}) {
  using client = Deno.createHttpClient({});
  const response = await fetch(url, { ...init, client, signal: AbortSignal.timeout(10_000) });
  return { status: response.status, text: await response.text() };
}

/** Whether something accepts TCP connections at `hostname:port`. */
async function accepts(hostname: string, port: number): Promise<boolean> {
  try {
    (await Deno.connect({ hostname, port })).close();
    return true;
  } catch {
    return false;
  }
}

Deno.test("deno task serve listens on PORT, on 127.0.0.1 unless HOST says otherwise", async () => {
  const policy = await defaultPolicyWith({ store: "  allow_per_instance: true\n" });
  try {
    await using serve = await startServe({ GATEWAY_POLICY: policy }, { task: true });
    assert.equal((await fresh(`${serve.url}/healthz`)).status, 200);
    // Not on the machine's other addresses.
    const other = Deno.networkInterfaces().find((i) =>
      i.family === "IPv4" && !i.address.startsWith("127.")
    );
    if (other) assert.equal(await accepts(other.address, serve.port), false, other.address);
  } finally {
    await Deno.remove(policy);
  }
});

Deno.test("serve.ts adds up every worker's metrics on each scrape, on the main port and metrics.port", async () => {
  const metricsPort = freePort();
  const token = "s3cret-metrics-token-0123456789";
  const auth = { headers: { authorization: `Bearer ${token}` } };
  const policy = await defaultPolicyWith({ store: "  allow_per_instance: true\n" });
  try {
    await using serve = await startServe({
      GATEWAY_POLICY: policy,
      METRICS_TOKEN: token,
      METRICS_PORT: String(metricsPort),
    });
    const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    // The second worker may still be starting: a scrape then rightly counts one.
    await bothWorkersUp(metricsUrl, auth);
    for (let i = 0; i < 20; i++) {
      const answer = await fresh(`${serve.url}/v1/consents/c-1/status`, {
        headers: { "x-request-id": crypto.randomUUID() },
      });
      assert.equal(answer.status, 200);
    }
    const series = /xs2a_requests_total\{op="getConsentStatus",status="200"\} (\d+)/;
    const scrapes: string[] = [];
    for (let i = 0; i < 4; i++) {
      scrapes.push((await fresh(`${serve.url}/metrics`, auth)).text);
      scrapes.push((await fresh(metricsUrl, auth)).text);
    }
    for (const text of scrapes) {
      assert.equal(text.match(series)?.[1], "20", text);
      assert.match(text, /\nxs2a_workers 2\n/);
      assert.match(text, /xs2a_request_duration_seconds_count\{op="getConsentStatus"\} 20\n/);
    }
  } finally {
    await Deno.remove(policy);
  }
});

/** Runs `deno serve --parallel` of serve.ts until it exits by itself (or 20 s); its output. */
async function serveUntilExit(env: Record<string, string>) {
  const child = new Deno.Command(Deno.execPath(), {
    args: serveArgs(freePort()),
    env: { UPSTREAM_URL: "http://127.0.0.1:9", ...env },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
  const output = await child.output();
  clearTimeout(timer);
  const text = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
  return { code: output.code, text };
}

Deno.test("serve.ts refuses a memory store under several workers unless the policy allows it", async () => {
  const refused = await serveUntilExit({ DENO_JOBS: "2" });
  assert.equal(refused.code, 1, refused.text);
  const line = refused.text.split("\n").find((l) => l.includes("allow_per_instance"));
  assert.ok(line, refused.text);
  assert.match(JSON.parse(line).problems[0], /memory store .* with 2 workers/);
});

Deno.test("serve.ts refuses a memory store on Deno Deploy unless the policy allows it", async () => {
  const refused = await serveUntilExit({ DENO_JOBS: "1", DENO_DEPLOYMENT_ID: "test-deployment" });
  assert.equal(refused.code, 1, refused.text);
  assert.match(refused.text, /memory store .* on Deno Deploy/);
});

Deno.test("serve.ts reads the files its policy names without synchronous file calls, as on Deno Deploy", async () => {
  const { createCa, issue, nginxHeader } = await import("./support/pki.ts");
  const { exportJWK, generateKeyPair, SignJWT } = await import("jose");
  const { passthroughPolicy, policyYaml } = await import("./support/policies.ts");
  const dir = await Deno.makeTempDir();
  const ca = await createCa();
  const tpp = await issue(ca);
  const keys = await generateKeyPair("RS256");
  await Deno.writeTextFile(`${dir}/qtsp.pem`, ca.pem);
  await Deno.writeTextFile(
    `${dir}/jwks.json`,
    JSON.stringify({ keys: [{ ...await exportJWK(keys.publicKey), kid: "k1", alg: "RS256" }] }),
  );
  await Deno.writeTextFile(
    `${dir}/policy.yaml`,
    policyYaml(passthroughPolicy({
      store: { kind: "memory", allow_per_instance: true },
      trust: { anchors: ["${CA_FILE}"] },
      defaults: {
        tpp_certificate: { mode: "enforce", required: true },
        bearer_token: {
          mode: "enforce",
          required: true,
          jwks_file: `${dir}/jwks.json`,
          issuer: "https://idp.example",
        },
      },
    })),
  );
  const token = await new SignJWT({ iss: "https://idp.example", sub: "PSU-1" })
    .setProtectedHeader({ alg: "RS256", kid: "k1" })
    .setExpirationTime("5m")
    .sign(keys.privateKey);
  const upstream = await startEchoUpstream();
  const port = freePort();
  // `deno run` with DENO_AUTO_SERVE serves serve.ts as `deno serve` does; `deno serve` itself runs
  // a --preload module only after the entry's npm imports (Deno 2.9), too late to take anything.
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--preload", "tests/support/deploy_fs.ts", "--allow-all", "serve.ts"],
    env: {
      DENO_AUTO_SERVE: "1",
      DENO_SERVE_ADDRESS: `tcp:127.0.0.1:${port}`,
      UPSTREAM_URL: upstream.url,
      GATEWAY_POLICY: `${dir}/policy.yaml`,
      CA_FILE: `${dir}/qtsp.pem`,
      DENO_DEPLOYMENT_ID: "test-deployment",
    },
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  try {
    await waitFor(`http://127.0.0.1:${port}/healthz`).catch(async (error) => {
      child.kill("SIGKILL");
      throw new Error(`${error.message}: ${await stderr}`);
    });
    const answer = await fresh(`http://127.0.0.1:${port}/v1/consents/c-1/status`, {
      headers: {
        "x-request-id": crypto.randomUUID(),
        "x-ssl-client-cert": nginxHeader(tpp),
        authorization: `Bearer ${token}`,
      },
    });
    assert.equal(answer.status, 200, answer.text);
    const refused = await fresh(`http://127.0.0.1:${port}/v1/consents/c-1/status`, {
      headers: { "x-request-id": crypto.randomUUID(), authorization: `Bearer ${token}` },
    });
    assert.equal(refused.status, 401, "the certificate is required: the policy was applied");
  } finally {
    await stop(child);
    await stderr;
    await upstream.close();
    await Deno.remove(dir, { recursive: true });
  }
});
