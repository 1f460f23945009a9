/**
 * A real three-node Redis Cluster for tests: three `redis-server --cluster-enabled yes` on free
 * ports in a temporary directory, joined with `redis-cli --cluster create` (no replicas).
 * A missing redis-server or redis-cli fails the test; the tests that need it are ignored only
 * under SKIP_REDIS=1, like the other Redis tests.
 */

/** A running cluster of the test's own. */
export interface RedisCluster extends AsyncDisposable {
  /** One URL per node (any of them finds the others). */
  urls: string[];
  /** Runs redis-cli against the first node and returns its output, trimmed. */
  cli(...args: string[]): Promise<string>;
  /** The keys matching `pattern` on every node. */
  keys(pattern: string): Promise<string[]>;
  /** The slot of `key` (CLUSTER KEYSLOT). */
  keyslot(key: string): Promise<number>;
  /** The node (0 to 2) that holds `key`'s slot. */
  nodeOf(key: string): Promise<number>;
  /** Kills node `i` (SIGKILL: no clean shutdown). */
  kill(i: number): Promise<void>;
  /** Starts node `i` again with its cluster configuration, until the cluster is ok. */
  start(i: number): Promise<void>;
  /**
   * Starts node `i` again and stops it (SIGSTOP) as soon as it accepts connections: the kernel
   * still takes connections into its backlog, and nothing answers them.
   */
  startFrozen(i: number): Promise<void>;
  /** Stops node `i` without closing its connections (SIGSTOP): it holds them and answers nothing. */
  pause(i: number): void;
  /** Lets a paused node `i` go on (SIGCONT). */
  resume(i: number): void;
  /** Kills the nodes and removes their directory at once (for an `unload` listener). */
  stopNow(): void;
}

/**
 * A free port whose cluster bus port (port + 10000) is free too, both below Linux's ephemeral
 * range (32768-60999), so that no connection of another test takes them meanwhile.
 */
export function freeClusterPort(taken: Set<number>): number {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 2_700);
    if (taken.has(port)) continue;
    try {
      Deno.listen({ hostname: "127.0.0.1", port }).close();
      Deno.listen({ hostname: "127.0.0.1", port: port + 10_000 }).close();
      taken.add(port);
      return port;
    } catch {
      // Taken: try another.
    }
  }
}

async function run(command: string, args: string[]): Promise<string> {
  const { code, stdout, stderr } = await new Deno.Command(command, { args }).output();
  const text = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
  if (code !== 0) throw new Error(`${command} ${args.join(" ")} failed: ${text.slice(0, 500)}`);
  return text.trim();
}

async function until(what: string, ms: number, ready: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await ready().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what} within ${ms} ms`);
}

/** A cluster whose nodes speak TLS only: certificate and key files, and the CA that issued them. */
export interface ClusterTls {
  certFile: string;
  keyFile: string;
  caFile: string;
}

/** How the nodes of a test cluster are reached. */
export interface ClusterOptions {
  /** TLS only (`rediss://` URLs, the cluster bus too). */
  tls?: ClusterTls;
  /** The default user's password on every node (`requirepass`, and `masterauth` between them). */
  password?: string;
}

/** One cluster node on `port`, its cluster configuration in `dir` (kept across restarts). */
function node(dir: string, port: number, options: ClusterOptions): Deno.ChildProcess {
  const { tls, password } = options;
  const auth = password ? ["--requirepass", password, "--masterauth", password] : [];
  const listen = tls
    ? [
      ...["--port", "0", "--tls-port", String(port), "--tls-cluster", "yes"],
      ...["--tls-cert-file", tls.certFile, "--tls-key-file", tls.keyFile],
      ...["--tls-ca-cert-file", tls.caFile, "--tls-auth-clients", "no"],
    ]
    : ["--port", String(port)];
  return new Deno.Command("redis-server", {
    args: [
      ...listen,
      ...auth,
      "--bind",
      "127.0.0.1",
      "--cluster-enabled",
      "yes",
      "--cluster-config-file",
      `${dir}/nodes-${port}.conf`,
      "--dir",
      dir,
      "--save",
      "",
      "--appendonly",
      "no",
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
}

/** redis-cli with the cluster's connection options (TLS or not), given its other arguments. */
type RedisCli = (args: string[]) => Promise<string>;

async function clusterOk(redisCli: RedisCli, port: number): Promise<void> {
  await until(
    `the cluster was not ok on port ${port}`,
    10_000,
    async () =>
      (await redisCli(["-p", String(port), "cluster", "info"])).includes("cluster_state:ok"),
  );
}

/** Starts three cluster nodes, joins them and waits for `cluster_state:ok` on each. */
export async function startRedisCluster(options: ClusterOptions = {}): Promise<RedisCluster> {
  const { tls, password } = options;
  const cliArgs = [
    ...(tls ? ["--tls", "--cacert", tls.caFile] : []),
    ...(password ? ["--no-auth-warning", "-a", password] : []),
  ];
  const redisCli: RedisCli = (args) => run("redis-cli", [...cliArgs, ...args]);
  const dir = await Deno.makeTempDir({ prefix: "xs2a-cluster-" });
  const taken = new Set<number>();
  const ports = [freeClusterPort(taken), freeClusterPort(taken), freeClusterPort(taken)];
  const servers: Deno.ChildProcess[] = [];
  function stopNow() {
    for (const server of servers) {
      try {
        server.kill("SIGKILL");
      } catch {
        // Already ended.
      }
    }
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // Already removed.
    }
  }
  async function stop() {
    stopNow();
    for (const server of servers) await server.status;
  }
  try {
    for (const port of ports) servers.push(node(dir, port, options));
    for (const port of ports) {
      await until(
        `redis-server on port ${port} did not answer`,
        5000,
        async () => await redisCli(["-p", String(port), "ping"]) === "PONG",
      );
    }
    await redisCli([
      "--cluster",
      "create",
      ...ports.map((port) => `127.0.0.1:${port}`),
      "--cluster-replicas",
      "0",
      "--cluster-yes",
    ]);
    for (const port of ports) await clusterOk(redisCli, port);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    urls: ports.map((port) => `${tls ? "rediss" : "redis"}://127.0.0.1:${port}`),
    cli: (...args) => redisCli(["-c", "-p", String(ports[0]), ...args]),
    async keys(pattern) {
      const found = await Promise.all(
        ports.map((port) => redisCli(["-p", String(port), "--raw", "keys", pattern])),
      );
      return found.flatMap((text) => text.split("\n")).filter((key) => key !== "");
    },
    async keyslot(key) {
      return Number(await redisCli(["-p", String(ports[0]), "cluster", "keyslot", key]));
    },
    async nodeOf(key) {
      // CLUSTER NODES: "<id> <ip>:<port>@<bus> <flags> <master> ... <state> <from>-<to> ...".
      const slot = Number(
        await redisCli(["-p", String(ports[0]), "cluster", "keyslot", key]),
      );
      const lines = await redisCli(["-p", String(ports[0]), "cluster", "nodes"]);
      for (const line of lines.split("\n")) {
        const fields = line.split(" ");
        const port = Number(fields[1].split("@")[0].split(":")[1]);
        const owns = fields.slice(8).some((range) => {
          const [from, to = from] = range.split("-").map(Number);
          return from <= slot && slot <= to;
        });
        if (owns) return ports.indexOf(port);
      }
      throw new Error(`No node holds slot ${slot}`);
    },
    async kill(i) {
      servers[i].kill("SIGKILL");
      await servers[i].status;
    },
    async start(i) {
      servers[i] = node(dir, ports[i], options);
      for (const port of ports) await clusterOk(redisCli, port);
    },
    async startFrozen(i) {
      servers[i] = node(dir, ports[i], options);
      await until(`redis-server on port ${ports[i]} did not listen`, 5000, async () => {
        (await Deno.connect({ hostname: "127.0.0.1", port: ports[i] })).close();
        return true;
      });
      servers[i].kill("SIGSTOP");
    },
    pause(i) {
      servers[i].kill("SIGSTOP");
    },
    resume(i) {
      servers[i].kill("SIGCONT");
    },
    stopNow,
    [Symbol.asyncDispose]: stop,
  };
}
