/**
 * Real Redis for tests: the shared server of the run, and throw-away redis-server processes a test
 * can kill and restart. The shared server is REDIS_URL (`deno task test` starts one), else a
 * redis-server this test process starts on first import (plain `deno test`). When it cannot
 * start, the Redis tests fail; they are skipped only when the run says SKIP_REDIS=1.
 */
import { createClient } from "redis";
import type { PolicyInput } from "./policies.ts";
import { createStore } from "../../src/store/mod.ts";
import type { Store } from "../../src/store/types.ts";
import { storeSection } from "../../src/sections/sections.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import { limit } from "./store_contract.ts";
import { retryUntil } from "./wait.ts";

/** SKIP_REDIS=1: the run asks, explicitly, to skip the tests that need Redis (shown as ignored). */
export const SKIP_REDIS = Deno.env.get("SKIP_REDIS") === "1";

/** `ignore` for tests that need Redis: only when the run says SKIP_REDIS=1. */
export const WITHOUT_REDIS = SKIP_REDIS;

/** Why the shared Redis could not be started, when it could not. */
let sharedProblem: string | undefined;

/**
 * Ports handed out in this process: each once, though its server may not be listening yet.
 * Declared before the shared server's start below, which draws the first.
 */
const handedOut = new Set<number>();

/** The shared Redis of the test run (undefined under SKIP_REDIS=1 or when it could not start). */
export const REDIS_URL = SKIP_REDIS ? undefined : Deno.env.get("REDIS_URL") ?? await ownServer();

/** The shared Redis URL; throws (the test fails) when there is none. */
export function redisUrl(): string {
  if (REDIS_URL) return REDIS_URL;
  throw new Error(
    SKIP_REDIS
      ? "SKIP_REDIS=1 is set, yet a test that needs Redis ran: give it `ignore: WITHOUT_REDIS`"
      : `No Redis for the tests: ${sharedProblem}. Install redis-server (apt-get install redis-server), set REDIS_URL, or skip these tests explicitly with SKIP_REDIS=1`,
  );
}

/**
 * Starts the shared redis-server of this test process. It runs under a shell that waits on a
 * pipe from this process and kills the server when the pipe closes: when this process ends in
 * any way, even killed, the server goes with it.
 */
async function ownServer(): Promise<string | undefined> {
  const port = freePort();
  try {
    // Not installed: NotFound at once, rather than a wait for a server that never answers.
    await new Deno.Command("redis-server", { args: ["--version"], stdout: "null" }).output();
    const child = new Deno.Command("sh", {
      args: [
        "-c",
        'redis-server "$@" & server=$!; read _; kill -9 "$server"',
        "sh",
        ...["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      ],
      stdin: "piped",
      stdout: "null",
      stderr: "null",
    }).spawn();
    child.unref();
    await waitForRedis(port, 5000);
    return `redis://127.0.0.1:${port}`;
  } catch (error) {
    sharedProblem = `redis-server did not start (${(error as Error).message})`;
    return undefined;
  }
}

let counter = 0;

/** A key prefix no other test uses, so tests never see each other's keys. */
export function uniquePrefix(): string {
  return `test:${crypto.randomUUID().slice(0, 8)}:${++counter}:`;
}

/**
 * A free port below Linux's ephemeral range (32768-60999): a server listening on port 0, here or
 * in another test run on the machine, can never take it while a killed Redis is down. Never the
 * same port twice in one process: servers started side by side (each test of the restart faults
 * starts six) would otherwise, now and then, draw one port, and the second redis-server, unable
 * to listen, would leave its test talking to the first.
 */
function freePort(): number {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (handedOut.has(port)) continue;
    try {
      Deno.listen({ hostname: "127.0.0.1", port }).close();
      handedOut.add(port);
      return port;
    } catch {
      // Taken: try another.
    }
  }
}

/** Waits until a Redis answers PING on the port (not merely something listening). */
async function waitForRedis(port: number, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    try {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      try {
        await conn.write(new TextEncoder().encode("PING\r\n"));
        const buffer = new Uint8Array(16);
        const timer = setTimeout(() => conn.close(), 500);
        const read = await conn.read(buffer).finally(() => clearTimeout(timer));
        if (read && new TextDecoder().decode(buffer.subarray(0, read)).startsWith("+PONG")) return;
      } finally {
        try {
          conn.close();
        } catch {
          // Closed by the timer.
        }
      }
    } catch {
      // Not up yet.
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`redis-server did not answer on port ${port}`);
}

/** A redis-server process of the test's own, on a free port. */
export interface RedisProcess extends AsyncDisposable {
  url: string;
  /** The TLS URL (`rediss://localhost:…`) when started with `tls`. */
  tlsUrl?: string;
  port: number;
  /** Kills the server (SIGKILL: no clean shutdown). */
  kill(): Promise<void>;
  /** Starts it again on the same port (empty unless started `durable`). */
  start(): Promise<void>;
  /** Freezes (SIGSTOP) or thaws (SIGCONT) the server: connections stay open, nothing answers. */
  freeze(frozen: boolean): void;
}

/** Options of {@link startRedisServer}. */
export interface RedisServerOptions {
  /**
   * Keep the data across a kill and restart, as a bank's Redis must: an append-only file in a
   * temporary directory, written before every reply (`appendfsync always`). Default: no
   * persistence, a restarted server is empty.
   */
  durable?: boolean;
  /**
   * Also listen for TLS (`tlsUrl`) with this certificate and key (PEM texts); clients need no
   * certificate of their own. The plain port stays for the test's own checks.
   */
  tls?: { cert: string; key: string };
  /** More redis-server arguments, such as `["--rename-command", "CONFIG", ""]`. */
  args?: string[];
}

/** A TLS port of its own for a redis-server: its certificate and key written to a directory. */
async function tlsListener(pems: { cert: string; key: string }) {
  const port = freePort();
  const dir = await Deno.makeTempDir({ prefix: "redis-tls-" });
  await Deno.writeTextFile(`${dir}/cert.pem`, pems.cert);
  await Deno.writeTextFile(`${dir}/key.pem`, pems.key);
  const args = [
    ...["--tls-port", String(port), "--tls-auth-clients", "no"],
    ...["--tls-cert-file", `${dir}/cert.pem`, "--tls-key-file", `${dir}/key.pem`],
  ];
  return { port, dir, args };
}

/** Starts a throw-away redis-server. */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisProcess> {
  const port = freePort();
  const dir = options.durable ? await Deno.makeTempDir({ prefix: "redis-aof-" }) : undefined;
  const persistence = dir
    ? ["--appendonly", "yes", "--appendfsync", "always", "--dir", dir]
    : ["--appendonly", "no"];
  const tls = options.tls ? await tlsListener(options.tls) : undefined;
  let child: Deno.ChildProcess | undefined;
  const start = async () => {
    child = new Deno.Command("redis-server", {
      args: [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        ...persistence,
        ...(tls?.args ?? []),
        ...(options.args ?? []),
      ],
      stdout: "null",
      stderr: "null",
    }).spawn();
    await waitForRedis(port, 5000);
  };
  const kill = async () => {
    if (!child) return;
    child.kill("SIGKILL");
    await child.status;
    child = undefined;
  };
  await start();
  const freeze = (frozen: boolean) => child?.kill(frozen ? "SIGSTOP" : "SIGCONT");
  const dispose = async () => {
    freeze(false);
    await kill();
    if (dir) await Deno.remove(dir, { recursive: true });
    if (tls) await Deno.remove(tls.dir, { recursive: true });
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    tlsUrl: tls && `rediss://localhost:${tls.port}`,
    port,
    kill,
    start,
    freeze,
    [Symbol.asyncDispose]: dispose,
  };
}

/** A plain node-redis client for assertions on what the store wrote. */
export async function redisClient(url: string) {
  const client = createClient({ url, RESP: 2 });
  client.on("error", () => {});
  await client.connect();
  return client;
}

/** The `store` section of a test policy for one backend, and what it needs running. */
export interface StoreSetup extends AsyncDisposable {
  /** The `store` section (with `${...}` references into `env`), to merge into a test policy. */
  policy: PolicyInput;
  env: Record<string, string>;
}

/**
 * A store section for `kind` on its own key prefix: memory, the shared Redis (or `url`), or an
 * Upstash-protocol server in front of it.
 */
export async function storeSetup(
  kind: "memory" | "redis" | "upstash",
  options: { url?: string; timeoutMs?: number } = {},
): Promise<StoreSetup> {
  const timeout = `${options.timeoutMs ?? 500}ms`;
  if (kind === "memory") {
    return {
      policy: { store: { kind: "memory" } },
      env: {},
      [Symbol.asyncDispose]: async () => {},
    };
  }
  const url = options.url ?? redisUrl();
  const prefix = uniquePrefix();
  if (kind === "redis") {
    return {
      policy: { store: { kind: "redis", url: "${TEST_STORE_URL}", prefix, timeout } },
      env: { TEST_STORE_URL: url },
      [Symbol.asyncDispose]: async () => {},
    };
  }
  const { startUpstashServer } = await import("./upstash_server.ts");
  const server = await startUpstashServer(url);
  return {
    policy: {
      store: {
        kind: "upstash",
        url: "${TEST_STORE_URL}",
        token: "${TEST_STORE_TOKEN}",
        prefix,
        timeout,
      },
    },
    env: { TEST_STORE_URL: server.url, TEST_STORE_TOKEN: server.token },
    [Symbol.asyncDispose]: () => server.close(),
  };
}

/** A throw-away redis-server and a Redis store on it; see {@link ownRedisStore}. */
export interface OwnRedisStore extends AsyncDisposable {
  redis: RedisProcess;
  store: Store;
  /** The store's log. */
  log: ReturnType<typeof memoryLogger>;
}

/**
 * Starts a redis-server of the test's own and a Redis store on it (its own key prefix, `timeout`
 * 500 ms unless given); `ready`: once the store has decided, so that the test starts from a live
 * connection. Disposal closes the store, then stops the server.
 */
export async function ownRedisStore(
  options: { timeout?: string; ready?: boolean; server?: RedisServerOptions } = {},
): Promise<OwnRedisStore> {
  const redis = await startRedisServer(options.server);
  const log = memoryLogger();
  const section = storeSection.parse({
    kind: "redis",
    url: redis.url,
    prefix: uniquePrefix(),
    timeout: options.timeout ?? "500ms",
  });
  const store = await createStore(section, { log });
  const dispose = async () => {
    await store.close();
    await redis[Symbol.asyncDispose]();
  };
  try {
    if (options.ready) {
      await retryUntil(() => store.decide({ limits: [limit()] }), 3000);
    }
  } catch (error) {
    await dispose();
    throw error;
  }
  return { redis, store, log, [Symbol.asyncDispose]: dispose };
}
