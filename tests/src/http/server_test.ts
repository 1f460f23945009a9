import assert from "node:assert/strict";
import { serveTestGateway } from "../../support/served_gateway.ts";
import { defaultServices } from "../../../src/policy/services.ts";
import { memoryLogger } from "../../../src/lib/log.ts";
import { startUpstream } from "../../support/upstream.ts";
import { passthroughPolicy, type PolicyInput, policyYaml } from "../../support/policies.ts";
import { waitFor } from "../../support/wait.ts";
import { perInstanceProblem } from "../../../src/http/server.ts";
import { storeSection } from "../../../src/sections/sections.ts";

const ID = "3c2b1a09-8f7e-4d6c-9b5a-4e3d2c1b0a9f";

/** A policy where only the body limit (and the given sections) matter. */
function policy(upstream: string, maxBytes = 1000, sections: PolicyInput = {}) {
  return policyYaml(
    passthroughPolicy({ upstream: { url: upstream } }, {
      defaults: { body_limit: { max_bytes: maxBytes } },
    }, sections),
  );
}

async function post(url: string, size: number) {
  const response = await fetch(`${url}/v1/consents`, {
    method: "POST",
    headers: { "x-request-id": ID, "content-type": "application/json" },
    body: JSON.stringify({ pad: "x".repeat(size) }),
  });
  await response.body?.cancel();
  return response.status;
}

Deno.test("serveGateway() reloads a good policy and refuses a bad one while serving", async () => {
  await using upstream = startUpstream();
  const log = memoryLogger();
  const services = defaultServices({ log });
  await using served = await serveTestGateway({ policy: policy(upstream.url), services });
  const { file, server, url } = served;
  assert.equal(await post(url, 200), 200);
  await Deno.writeTextFile(file, policy(upstream.url, 100));
  assert.equal(await server.reload(), true);
  assert.equal(await post(url, 200), 413, "the new limit applies");

  await Deno.writeTextFile(file, policy(upstream.url, 100) + "defaults_typo: {}\n");
  assert.equal(await server.reload(), false);
  assert.equal(await post(url, 200), 413, "the previous policy keeps serving");
  assert.equal(await post(url, 10), 200);
  const refused = log.lines.find((l) => String(l.msg).startsWith("policy reload refused"));
  assert.ok(refused, "the refusal is logged");
  assert.match(JSON.stringify(refused.problems), /defaults_typo/);
  assert.equal(services.metrics.reloads.value({ outcome: "refused" }), 1);
  assert.equal(services.metrics.reloads.value({ outcome: "applied" }), 1);
});

Deno.test("serveGateway() reloads when the policy file changes", async () => {
  await using upstream = startUpstream();
  const services = defaultServices({ log: memoryLogger() });
  await using served = await serveTestGateway({
    policy: policy(upstream.url),
    services,
    watch: true,
  });
  const { file, url } = served;
  assert.equal(await post(url, 200), 200);
  await Deno.writeTextFile(file, policy(upstream.url, 100));
  assert.ok(await waitFor(() => services.metrics.reloads.value({ outcome: "applied" }) === 1));
  assert.equal(await post(url, 200), 413);
});

Deno.test("serveGateway() lets a request in flight finish on shutdown", async () => {
  const reached = Promise.withResolvers<void>();
  const held = Promise.withResolvers<void>();
  await using upstream = startUpstream(async () => {
    reached.resolve();
    await held.promise;
    return Response.json({ consentStatus: "valid" });
  });
  await using served = await serveTestGateway({ policy: policy(upstream.url) });
  const { server, url } = served;
  const inFlight = fetch(`${url}/v1/consents/c-1/status`, { headers: { "x-request-id": ID } });
  await reached.promise;
  // The core answers only once the shutdown has begun.
  const stopping = server.shutdown(5000);
  held.resolve();
  await stopping;
  const response = await inFlight;
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), { consentStatus: "valid" });
  await assert.rejects(fetch(`${url}/healthz`), "no new connections after shutdown");
});

Deno.test("metrics are scraped on their own port and move with traffic", async () => {
  await using upstream = startUpstream();
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const metricsPort = (listener.addr as Deno.NetAddr).port;
  listener.close();
  await using served = await serveTestGateway({
    policy: policy(upstream.url, 100, { metrics: { port: String(metricsPort) } }),
  });
  const { url } = served;
  assert.equal(await post(url, 10), 200);
  assert.equal(await post(url, 10), 200);
  assert.equal(await post(url, 500), 413);
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  assert.match(text, /xs2a_requests_total\{op="createConsent",status="200"\} 2/);
  assert.match(text, /xs2a_requests_total\{op="createConsent",status="413"\} 1/);
  assert.match(text, /xs2a_rejections_total\{check="body_limit",code="PAYLOAD_TOO_LARGE"\} 1/);
  assert.match(text, /xs2a_upstream_duration_seconds_count\{op="createConsent"\} 2/);
  const main = await fetch(`${url}/metrics`);
  assert.equal(main.status, 404, "not on the main port without a token");
  await main.body?.cancel();
});

Deno.test("metrics on the main port need the bearer token", async () => {
  await using upstream = startUpstream();
  const token = "s3cret-metrics-token-0123456789";
  await using served = await serveTestGateway({
    policy: policy(upstream.url, 100, { metrics: { token } }),
  });
  const { url } = served;
  const anonymous = await fetch(`${url}/metrics`);
  assert.equal(anonymous.status, 401);
  await anonymous.body?.cancel();
  const wrong = await fetch(`${url}/metrics`, { headers: { authorization: "Bearer nope" } });
  assert.equal(wrong.status, 401);
  await wrong.body?.cancel();
  const scraped = await fetch(`${url}/metrics`, {
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(scraped.status, 200);
  assert.match(await scraped.text(), /# TYPE xs2a_requests_total counter/);
});

Deno.test("metrics show how many entries the memory store holds", async () => {
  await using upstream = startUpstream();
  const token = "s3cret-metrics-token-0123456789";
  await using served = await serveTestGateway({
    policy: policyYaml(passthroughPolicy({
      upstream: { url: upstream.url },
      defaults: { idempotency: { mode: "enforce" } },
      metrics: { token },
    })),
  });
  const { url } = served;
  const scrape = async () =>
    await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } }))
      .text();
  assert.match(await scrape(), /\n# TYPE xs2a_store_entries gauge\nxs2a_store_entries 0\n/);
  assert.equal(await post(url, 10), 200);
  assert.match(await scrape(), /\nxs2a_store_entries 1\n/, "the kept answer of the POST");
});

/** How a policy file is laid out in its directory and saved again. */
interface Layout {
  /** Writes the first text; returns the path the gateway is given. */
  create(dir: string, text: string): Promise<string>;
  save(dir: string, text: string): Promise<void>;
}

/**
 * A watching gateway on a file in `layout`, saved twice with a changed body limit: the watch must
 * survive the first save to see the second.
 */
async function watchSurvives(layout: Layout) {
  await using upstream = startUpstream();
  const dir = await Deno.makeTempDir();
  const file = await layout.create(dir, policy(upstream.url));
  try {
    await using served = await serveTestGateway({ file, watch: true });
    const { services, url } = served;
    const applied = () => services.metrics.reloads.value({ outcome: "applied" });
    assert.equal(await post(url, 200), 200);
    await layout.save(dir, policy(upstream.url, 100));
    assert.ok(await waitFor(() => applied() === 1), "the first save is applied");
    assert.equal(await post(url, 200), 413);
    await layout.save(dir, policy(upstream.url, 1000));
    assert.ok(await waitFor(() => applied() === 2), "the second save is applied");
    assert.equal(await post(url, 200), 200);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("serveGateway() keeps watching after atomic saves (a temporary file renamed over it)", async () => {
  await watchSurvives({
    async create(dir, text) {
      await Deno.writeTextFile(`${dir}/policy.yaml`, text);
      return `${dir}/policy.yaml`;
    },
    async save(dir, text) {
      await Deno.writeTextFile(`${dir}/.policy.yaml.swp`, text);
      await Deno.rename(`${dir}/.policy.yaml.swp`, `${dir}/policy.yaml`);
    },
  });
});

Deno.test("serveGateway() keeps watching after sed -i edits", async () => {
  await watchSurvives({
    async create(dir, text) {
      await Deno.writeTextFile(`${dir}/policy.yaml`, text);
      return `${dir}/policy.yaml`;
    },
    async save(dir, text) {
      const bytes = text.match(/max_bytes: (\d+)/)![1];
      const sed = await new Deno.Command("sed", {
        args: ["-i", `s/max_bytes: [0-9]*/max_bytes: ${bytes}/`, `${dir}/policy.yaml`],
      }).output();
      assert.equal(sed.code, 0);
      assert.equal(await Deno.readTextFile(`${dir}/policy.yaml`), text);
    },
  });
});

Deno.test("serveGateway() keeps watching a Kubernetes ConfigMap volume (..data symlink swapped)", async () => {
  // What the kubelet does: each version in a directory of its own, `..data` a symlink to the
  // current one, the file a symlink through `..data`; an update makes a new directory, points
  // `..data_tmp` at it, renames `..data_tmp` over `..data` and removes the old directory.
  let version = 0;
  async function publish(dir: string, text: string) {
    const previous = version > 0 ? `..2025_01_01_00_00_0${version}` : undefined;
    const next = `..2025_01_01_00_00_0${++version}`;
    await Deno.mkdir(`${dir}/${next}`);
    await Deno.writeTextFile(`${dir}/${next}/policy.yaml`, text);
    await Deno.symlink(next, `${dir}/..data_tmp`);
    await Deno.rename(`${dir}/..data_tmp`, `${dir}/..data`);
    if (previous) await Deno.remove(`${dir}/${previous}`, { recursive: true });
  }
  await watchSurvives({
    async create(dir, text) {
      await publish(dir, text);
      await Deno.symlink("..data/policy.yaml", `${dir}/policy.yaml`);
      return `${dir}/policy.yaml`;
    },
    save: publish,
  });
});

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return new Uint8Array(digest).toHex();
}

Deno.test("serveGateway() writes one audit line with the file's SHA-256 per load, applied or refused", async () => {
  await using upstream = startUpstream();
  const good = policy(upstream.url);
  const log = memoryLogger();
  await using served = await serveTestGateway({ policy: good, services: defaultServices({ log }) });
  const { file, server } = served;
  const audits = () => log.lines.filter((l) => l.audit === "policy");
  const better = policy(upstream.url, 100);
  await Deno.writeTextFile(file, better);
  assert.equal(await server.reload(), true);
  const bad = better + "defaults_typo: {}\n";
  await Deno.writeTextFile(file, bad);
  assert.equal(await server.reload(), false);
  await Deno.remove(file);
  assert.equal(await server.reload(), false);
  assert.deepEqual(
    audits().map((l) => [l.level, l.trigger, l.outcome, l.sha256, l.file]),
    [
      ["info", "start", "applied", await sha256Hex(good), file],
      ["info", "reload", "applied", await sha256Hex(better), file],
      ["error", "reload", "refused", await sha256Hex(bad), file],
      ["error", "reload", "refused", null, file],
    ],
  );
  assert.match(JSON.stringify(audits()[2].problems), /defaults_typo/);
  assert.match(JSON.stringify(audits()[3].problems), /cannot read the file/);
  assert.equal(
    log.lines.filter((l) => /^policy/.test(String(l.msg))).length,
    4,
    "one line per load, nothing else",
  );
});

Deno.test("serveGateway() refuses a memory store on Deno Deploy unless the policy allows it", async () => {
  Deno.env.set("DENO_DEPLOYMENT_ID", "test-deployment");
  try {
    await assert.rejects(
      serveTestGateway({ policy: policy("http://127.0.0.1:9") }),
      /memory store .* on Deno Deploy .*; use kv, redis or upstash, or set store\.allow_per_instance/,
    );
    const allowed = { store: { allow_per_instance: true } };
    await using served = await serveTestGateway({
      policy: policy("http://127.0.0.1:9", 1000, allowed),
    });
    assert.equal(served.server.addr.hostname, "127.0.0.1");
  } finally {
    Deno.env.delete("DENO_DEPLOYMENT_ID");
  }
});

Deno.test("perInstanceProblem() names the durable stores that serve where a memory store cannot", () => {
  const memory = storeSection.parse({ kind: "memory" });
  assert.equal(perInstanceProblem(memory, { workers: 1, deploy: false }), undefined);
  assert.match(
    perInstanceProblem(memory, { workers: 4, deploy: false }) ?? "",
    /with 4 workers .*; use sqlite \(the workers share its file\), redis or upstash, or set/,
  );
  assert.match(
    perInstanceProblem(memory, { workers: 1, deploy: true }) ?? "",
    /on Deno Deploy .*; use kv, redis or upstash, or set/,
  );
  const allowed = storeSection.parse({ kind: "memory", allow_per_instance: true });
  assert.equal(perInstanceProblem(allowed, { workers: 4, deploy: true }), undefined);
});
