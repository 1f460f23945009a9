/**
 * A payment executed before a restart is never executed again: the TPP's retry with the same
 * X-Request-ID after a `kill -9` of main.ts (on the durable store a policy that names none gets,
 * and on Deno KV), or after a restart of an append-only Redis, gets the answer kept the first
 * time, and the core sees one POST. With the memory store main.ts used to default to, the core
 * saw two.
 */
import assert from "node:assert/strict";
import { startMain } from "../support/main_process.ts";
import { passthroughPolicy, type PolicyInput, policyYaml } from "../support/policies.ts";
import { startUpstream, type TestUpstream } from "../support/upstream.ts";
import { initiationHeaders, singlePayment } from "../support/requests.ts";
import { tokenIssuer } from "../support/tpp_tokens.ts";
import { startRedisServer, WITHOUT_REDIS } from "../support/redis.ts";
import { startGateway } from "../support/gateway.ts";

const PAYMENTS = "/v1/payments/sepa-credit-transfers";
const issuer = await tokenIssuer();

/** A core that creates a new payment for every request it executes. */
function paymentCore(): TestUpstream {
  return startUpstream(() =>
    Response.json({ transactionStatus: "RCVD", paymentId: crypto.randomUUID() }, { status: 201 })
  );
}

/** A policy of an identified TPP (bearer tokens) whose writes are replayed, over `store`. */
function replayPolicy(store: PolicyInput = {}): PolicyInput {
  return passthroughPolicy(store, {
    defaults: {
      bearer_token: issuer.options,
      idempotency: { mode: "enforce", writes: "replay" },
    },
  });
}

/** Sends the payment `id` to the gateway at `base`. */
async function pay(base: string, id: string) {
  const response = await fetch(base + PAYMENTS, {
    method: "POST",
    headers: { ...initiationHeaders({ "x-request-id": id }), ...await issuer.headers("TPP-1") },
    body: JSON.stringify(singlePayment()),
  });
  return {
    status: response.status,
    replay: response.headers.get("x-idempotent-replay"),
    body: await response.json(),
  };
}

function posts(core: TestUpstream, id: string): number {
  return core.received.filter((r) => r.method === "POST" && r.headers.get("x-request-id") === id)
    .length;
}

/** main.ts on `policy`, its data in `dir`: the base URL and a way to end it. */
async function gatewayProcess(dir: string, core: TestUpstream) {
  const env: Record<string, string> = {
    ...Deno.env.toObject(),
    PORT: "0",
    UPSTREAM_URL: core.url,
    GATEWAY_DATA_DIR: `${dir}/data`,
    GATEWAY_WATCH: "false",
  };
  delete env.GATEWAY_POLICY;
  const main = await startMain(["--policy", `${dir}/policy.yaml`], { env });
  const port = /xs2a-edge on http:\/\/127\.0\.0\.1:(\d+)/.exec(main.said)?.[1];
  assert.ok(port, `main.ts did not start: ${main.said}`);
  return {
    base: `http://127.0.0.1:${port}`,
    said: main.said,
    async stop(signal: "SIGKILL" | "SIGTERM") {
      main.child.kill(signal);
      await main.child.status;
      await main.child.stdout.cancel();
      await main.stderr.cancel();
    },
  };
}

for (
  const [title, store] of [
    ["a policy that names no store (sqlite in GATEWAY_DATA_DIR)", {}],
    ["store.kind kv (a Deno KV file)", { store: { kind: "kv" } }],
  ] as const
) {
  Deno.test(`main.ts, ${title}: a payment executed before a kill -9 is replayed after, never executed again`, async () => {
    await using core = paymentCore();
    const dir = await Deno.makeTempDir({ prefix: "xs2a-restart-" });
    try {
      await Deno.writeTextFile(`${dir}/policy.yaml`, policyYaml(replayPolicy(store)));
      const id = crypto.randomUUID();
      const first = await gatewayProcess(dir, core);
      const executed = await pay(first.base, id);
      assert.equal(executed.status, 201);
      assert.equal(executed.replay, null);
      await first.stop("SIGKILL");

      const second = await gatewayProcess(dir, core);
      try {
        assert.doesNotMatch(second.said, /store\.kind is memory/);
        const retried = await pay(second.base, id);
        assert.equal(retried.status, 201);
        assert.equal(retried.replay, "true");
        assert.deepEqual(retried.body, executed.body, "the answer kept the first time");
        assert.equal(posts(core, id), 1, "the core executed the payment once");
      } finally {
        await second.stop("SIGTERM");
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test({
  name:
    "a payment executed before a restart of an append-only Redis is replayed after, never executed again",
  ignore: WITHOUT_REDIS,
  async fn() {
    await using redis = await startRedisServer({ durable: true });
    await using core = paymentCore();
    await using gateway = await startGateway({
      policy: replayPolicy({ store: { kind: "redis", url: "${TEST_STORE_URL}" } }),
      upstream: core.url,
      env: { TEST_STORE_URL: redis.url },
    });
    const base = gateway.url;
    const id = crypto.randomUUID();
    const executed = await pay(base, id);
    assert.equal(executed.status, 201);
    await redis.kill();
    await redis.start();
    const retried = await pay(base, id);
    assert.equal(retried.status, 201);
    assert.equal(retried.replay, "true");
    assert.deepEqual(retried.body, executed.body);
    assert.equal(posts(core, id), 1, "the core executed the payment once");
  },
});

Deno.test("main.ts that cannot write its store's file refuses to start in one JSON line naming the file", async () => {
  const dir = await Deno.makeTempDir({ prefix: "xs2a-restart-" });
  try {
    await Deno.writeTextFile(`${dir}/policy.yaml`, policyYaml(replayPolicy()));
    const env: Record<string, string> = {
      PATH: Deno.env.get("PATH") ?? "",
      PORT: "0",
      UPSTREAM_URL: "http://127.0.0.1:9",
      GATEWAY_DATA_DIR: `${dir}/data`,
    };
    const output = await new Deno.Command(Deno.execPath(), {
      // As the container runs it, allowed to write its own data directory only.
      args: [
        ...["run", "--allow-net", "--allow-env", "--allow-read", "--allow-sys"],
        ...["--allow-write=/var/lib/xs2a-edge", "main.ts", "--policy", `${dir}/policy.yaml`],
      ],
      env,
      clearEnv: true,
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.equal(output.code, 1);
    const lines = new TextDecoder().decode(output.stderr).trim().split("\n");
    assert.equal(lines.length, 1, lines.join("\n"));
    const line = JSON.parse(lines[0]);
    assert.equal(line.msg, "the gateway cannot start");
    assert.match(
      line.problems[0],
      /Cannot open the SQLite store ".*\/data\/xs2a-edge\.sqlite".*--allow-write/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
