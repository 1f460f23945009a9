/**
 * Payments executed twice across a Redis Cluster failover, with and without `store.replicas`
 * (issue 37 item 6). A cluster of three masters with one replica each; the gateway (idempotency
 * enforce, fail closed, one identified TPP so that every key lies on one master) in front of a
 * core that counts executions per X-Request-ID. Each worker sends payments, and sends each one
 * again after its 201; a 503 or an error is retried with the same id. Under that load the master's
 * replica lags (SIGSTOP and its link cut for LAG_MS, default 500), the master is killed
 * (SIGKILL), the replica is let go and promoted by the cluster; the load goes on for 4 s. Then
 * every payment is sent once more (a TPP whose answer was lost retries after the failover). An id
 * the core saw twice is a payment executed twice.
 *
 *   deno run -A bench/failover_replicas.ts            # both runs, 0 and 1 replicas
 *   ROUNDS=3 deno run -A bench/failover_replicas.ts   # three of each
 */
import { startGateway } from "../tests/support/gateway.ts";
import { passthroughPolicy } from "../tests/support/policies.ts";
import { freeClusterPort } from "../tests/support/redis_cluster.ts";
import { initiationHeaders, singlePayment } from "../tests/support/requests.ts";
import { tokenIssuer } from "../tests/support/tpp_tokens.ts";
import { startUpstream } from "../tests/support/upstream.ts";

const TPP = "PSDDE-BAFIN-777777";
const WORKERS = 16;

async function run(command: string, args: string[]): Promise<string> {
  const { code, stdout, stderr } = await new Deno.Command(command, { args }).output();
  const text = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
  if (code !== 0) throw new Error(`${command} ${args.join(" ")}: ${text.slice(0, 300)}`);
  return text.trim();
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, ready: () => Promise<boolean>, ms = 20_000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await ready().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(what);
}

/** Six nodes, three masters with a replica each. */
async function cluster() {
  const dir = await Deno.makeTempDir({ prefix: "xs2a-failover-" });
  const taken = new Set<number>();
  const ports = Array.from({ length: 6 }, () => freeClusterPort(taken));
  const servers = new Map<number, Deno.ChildProcess>();
  for (const port of ports) {
    servers.set(
      port,
      new Deno.Command("redis-server", {
        args: [
          ...["--port", String(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes"],
          ...["--cluster-config-file", `${dir}/nodes-${port}.conf`, "--dir", dir],
          ...["--cluster-node-timeout", "1000", "--save", "", "--appendonly", "no"],
          // A replica syncs at once (the default waits 5 s for others), and can then be elected.
          ...["--repl-diskless-sync-delay", "0"],
        ],
        stdout: "null",
        stderr: "null",
      }).spawn(),
    );
  }
  const cli = (port: number, ...args: string[]) => run("redis-cli", ["-p", String(port), ...args]);
  for (const port of ports) {
    await until(`node ${port}`, async () => await cli(port, "ping") === "PONG");
  }
  await run("redis-cli", [
    "--cluster",
    "create",
    ...ports.map((p) => `127.0.0.1:${p}`),
    "--cluster-replicas",
    "1",
    "--cluster-yes",
  ]);
  for (const port of ports) {
    await until(
      "cluster ok",
      async () => (await cli(port, "cluster", "info")).includes("cluster_state:ok"),
    );
  }
  // Every replica synced with its master (a replica that never synced is never elected).
  await until("replicas synced", async () => {
    const roles = await Promise.all(ports.map((p) => cli(p, "info", "replication")));
    const replicas = roles.filter((r) => r.includes("role:slave"));
    return replicas.length === 3 && replicas.every((r) => r.includes("master_link_status:up"));
  });
  /** The master holding `key`'s slot and its replica. */
  async function pair(key: string) {
    const slot = Number(await cli(ports[0], "cluster", "keyslot", key));
    const nodes = (await cli(ports[0], "cluster", "nodes")).split("\n").map((l) => l.split(" "));
    const port = (f: string[]) => Number(f[1].split("@")[0].split(":")[1]);
    const master = nodes.find((f) =>
      f[2].includes("master") && f.slice(8).some((r) => {
        const [a, b = a] = r.split("-").map(Number);
        return a <= slot && slot <= b;
      })
    )!;
    const replica = nodes.find((f) => f[3] === master[0])!;
    return { master: port(master), replica: port(replica) };
  }
  return {
    url: `redis://127.0.0.1:${ports[0]}`,
    nodes: ports.slice(1).map((p) => `redis://127.0.0.1:${p}`),
    servers,
    cli,
    pair,
    async stop() {
      for (const server of servers.values()) {
        try {
          server.kill("SIGCONT");
          server.kill("SIGKILL");
        } catch {
          // Ended.
        }
        await server.status;
      }
      await Deno.remove(dir, { recursive: true });
    },
  };
}

async function round(replicas: number) {
  const redis = await cluster();
  const issuer = await tokenIssuer();
  const auth = await issuer.headers(TPP);
  const executions = new Map<string, number>();
  await using core = startUpstream((request) => {
    const id = request.headers.get("x-request-id")!;
    executions.set(id, (executions.get(id) ?? 0) + 1);
    return Response.json({ transactionStatus: "RCVD", paymentId: crypto.randomUUID() }, {
      status: 201,
    });
  });
  await using gateway = await startGateway({
    policy: passthroughPolicy({
      store: {
        kind: "redis",
        cluster: true,
        url: redis.url,
        nodes: redis.nodes,
        timeout: "500ms",
        replicas,
        replica_timeout: "100ms",
      },
      defaults: {
        bearer_token: issuer.options,
        idempotency: { mode: "enforce", fail: "closed" },
      },
    }),
    upstream: core.url,
  });
  const { master, replica } = await redis.pair(`{${TPP}}`);
  const statuses = new Map<number, number>();
  let stop = false;
  let payments = 0;
  const send = async (id: string) => {
    try {
      const response = await gateway.fetch("/v1/payments/sepa-credit-transfers", {
        method: "POST",
        headers: { ...initiationHeaders({ "x-request-id": id }), ...auth },
        body: JSON.stringify(singlePayment()),
      });
      await response.body?.cancel();
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      return response.status;
    } catch {
      return 0;
    }
  };
  const ids: string[] = [];
  async function worker() {
    while (!stop) {
      const id = crypto.randomUUID();
      ids.push(id);
      payments++;
      // Until a definitive answer; then once more, as a TPP whose answer was lost.
      for (let i = 0; i < 100 && !stop; i++) {
        const status = await send(id);
        if (status !== 503 && status !== 0) break;
        await sleep(50);
      }
      await send(id);
    }
  }
  const load = Promise.all(Array.from({ length: WORKERS }, worker));
  await sleep(2000);
  const lagMs = Number(Deno.env.get("LAG_MS") ?? "500");
  if (lagMs > 0) {
    // The replica falls behind: stopped, and its link cut by the master (a frozen replica would
    // read the stream from its socket buffer once let go), so that writes meanwhile stay on the
    // master alone, as with a replica on a slow or broken link.
    redis.servers.get(replica)!.kill("SIGSTOP");
    await redis.cli(master, "client", "kill", "type", "replica");
    await sleep(lagMs);
  }
  redis.servers.get(master)!.kill("SIGKILL");
  redis.servers.get(replica)!.kill("SIGCONT");
  const killedAt = Date.now();
  try {
    await until(
      "failover",
      async () => (await redis.cli(replica, "role")).startsWith("master"),
      30_000,
    );
  } catch (error) {
    console.error(await redis.cli(replica, "role").catch(String));
    console.error(await redis.cli(replica, "cluster", "nodes").catch(String));
    stop = true;
    await load;
    await redis.stop();
    throw error;
  }
  const failoverMs = Date.now() - killedAt;
  await sleep(4000);
  stop = true;
  await load;
  // Every payment once more after the failover: a TPP whose answer was lost retries it then.
  const retries = [...ids];
  await Promise.all(Array.from({ length: WORKERS }, async () => {
    for (let id = retries.pop(); id !== undefined; id = retries.pop()) await send(id);
  }));
  const twice = [...executions.values()].filter((n) => n > 1).length;
  await redis.stop();
  return {
    replicas,
    payments,
    executed: executions.size,
    executed_twice: twice,
    failover_ms: failoverMs,
    statuses: Object.fromEntries(statuses),
  };
}

const rounds = Number(Deno.env.get("ROUNDS") ?? "1");
for (let i = 0; i < rounds; i++) {
  for (const replicas of [0, 1]) console.log(JSON.stringify(await round(replicas)));
}
