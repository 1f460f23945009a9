/**
 * `deno task serve` as an operator drives it: SIGHUP and saving the policy file reload the policy
 * in every worker, each writing its audit line, and the process serves on; SIGTERM stops it
 * promptly, with a Redis Cluster store too, each worker saying that it stopped.
 */
import assert from "node:assert/strict";
import { startRedisCluster } from "./support/redis_cluster.ts";
import { closedPort } from "./support/upstream.ts";

const SKIP_REDIS = Deno.env.get("SKIP_REDIS") === "1";

/** A JSON log line of the gateway. */
type Line = Record<string, unknown>;

/** `deno task serve` with two workers, its log lines (stdout and stderr) collected as they come. */
class Serve implements AsyncDisposable {
  readonly lines: Line[] = [];
  readonly url: string;
  readonly child: Deno.ChildProcess;
  #waiters = new Set<() => void>();
  #done: Promise<void>;

  constructor(env: Record<string, string>) {
    const port = closedPort();
    this.url = `http://127.0.0.1:${port}`;
    this.child = new Deno.Command(Deno.execPath(), {
      args: ["task", "serve"],
      env: { DENO_JOBS: "2", PORT: String(port), ...env },
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#done = Promise.all([this.#read(this.child.stdout), this.#read(this.child.stderr)])
      .then(() => {});
  }

  async #read(stream: ReadableStream<Uint8Array>) {
    let rest = "";
    for await (const text of stream.pipeThrough(new TextDecoderStream())) {
      const parts = (rest + text).split("\n");
      rest = parts.pop()!;
      for (const part of parts) {
        if (!part.startsWith("{")) continue; // deno task's own "Task serve ..." line
        this.lines.push(JSON.parse(part));
        for (const wake of this.#waiters) wake();
      }
    }
  }

  /** The lines matching `match`, once there are `count` of them (failing after `ms`). */
  async until(match: (line: Line) => boolean, count: number, ms = 30_000): Promise<Line[]> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let wake: () => void = () => {};
    try {
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`not ${count} lines in ${ms} ms:\n${this.#text()}`)),
          ms,
        );
      });
      for (;;) {
        const found = this.lines.filter(match);
        if (found.length >= count) return found;
        const next = new Promise<void>((resolve) => wake = resolve);
        this.#waiters.add(wake);
        const drained = await Promise.race([next, late, this.#done.then(() => true)]);
        if (drained && this.lines.filter(match).length < count) {
          throw new Error(`the process ended:\n${this.#text()}`);
        }
        this.#waiters.delete(wake);
      }
    } finally {
      this.#waiters.delete(wake);
      clearTimeout(timer);
    }
  }

  #text() {
    return this.lines.map((line) => JSON.stringify(line)).join("\n");
  }

  /** Both workers serve, their signals taken, and one of them listens. */
  async started() {
    await this.until((line) => line.msg === "worker ready", 2);
    await this.until((line) => String(line.msg).startsWith("xs2a-edge on"), 1);
  }

  /**
   * Ends the process: SIGTERM first, which deno task and the launcher pass on to `deno serve`
   * (SIGKILL would end deno task alone and leave `deno serve` running), SIGKILL if that fails.
   */
  async [Symbol.asyncDispose]() {
    for (const signal of ["SIGTERM", "SIGKILL"] as const) {
      try {
        this.child.kill(signal);
      } catch {
        // Already ended.
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      const ended = await Promise.race([
        this.child.status.then(() => true),
        new Promise<false>((resolve) => timer = setTimeout(() => resolve(false), 10_000)),
      ]);
      clearTimeout(timer);
      if (ended) break;
    }
    await this.child.status;
    // After a SIGKILL, `deno serve` may hold the pipes still: not waited for then.
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([this.#done, new Promise((resolve) => timer = setTimeout(resolve, 1000))]);
    clearTimeout(timer);
  }
}

/** The default policy with a memory store per worker allowed, and `store` lines added. */
async function policyFile(dir: string, store = "  allow_per_instance: true\n"): Promise<string> {
  const text = await Deno.readTextFile("config/policy.yaml");
  const changed = text.replace(/^store:\n/m, `store:\n${store}`);
  assert.notEqual(changed, text);
  const file = `${dir}/policy.yaml`;
  await Deno.writeTextFile(file, changed);
  return file;
}

async function sha256(file: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", await Deno.readFile(file));
  return new Uint8Array(digest).toHex();
}

/** The distinct workers of `lines`. */
function workersOf(lines: Line[]): Set<unknown> {
  return new Set(lines.map((line) => line.worker));
}

async function healthy(url: string) {
  const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(10_000) });
  await response.body?.cancel();
  return response.status;
}

Deno.test("deno task serve reloads the policy in every worker on SIGHUP and on a save, refuses a bad file, serves on", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = await policyFile(dir);
    await using serve = new Serve({
      GATEWAY_POLICY: file,
      UPSTREAM_URL: `http://127.0.0.1:${closedPort()}`,
    });
    await serve.started();
    const loaded = serve.lines.filter((line) => line.msg === "policy loaded");
    assert.equal(workersOf(loaded).size, 2, "one audit line per worker, each with its id");
    for (const line of loaded) {
      assert.equal(line.audit, "policy");
      assert.equal(line.sha256, await sha256(file));
    }

    serve.child.kill("SIGHUP");
    const reloaded = await serve.until(
      (line) => line.msg === "policy reloaded" && line.sha256 === loaded[0].sha256,
      2,
    );
    assert.equal(workersOf(reloaded).size, 2);
    assert.equal(await healthy(serve.url), 200);

    // An atomic save (a temporary file renamed over it), as editors and ConfigMaps do.
    const text = await Deno.readTextFile(file);
    await Deno.writeTextFile(`${dir}/.policy.yaml.tmp`, `${text}\n# saved\n`);
    await Deno.rename(`${dir}/.policy.yaml.tmp`, file);
    const saved = await sha256(file);
    const changed = await serve.until(
      (line) => line.msg === "policy reloaded" && line.sha256 === saved,
      2,
    );
    assert.equal(workersOf(changed).size, 2);
    assert.equal(await healthy(serve.url), 200);

    // A bad file is refused by every worker, each keeping the policy it serves.
    await Deno.writeTextFile(`${dir}/.policy.yaml.tmp`, "upstream: [broken\n");
    await Deno.rename(`${dir}/.policy.yaml.tmp`, file);
    const refused = await serve.until((line) => line.outcome === "refused", 2);
    assert.equal(workersOf(refused).size, 2);
    assert.equal(await healthy(serve.url), 200);

    serve.child.kill("SIGTERM");
    const stopped = await serve.until((line) => line.msg === "xs2a-edge stopped (SIGTERM)", 2);
    assert.equal(workersOf(stopped).size, 2);
    assert.equal((await serve.child.status).code, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "deno task serve with a Redis Cluster store stops at once on SIGTERM after traffic",
  ignore: SKIP_REDIS,
  async fn() {
    await using cluster = await startRedisCluster();
    const dir = await Deno.makeTempDir();
    try {
      const file = await policyFile(dir, "  cluster: true\n");
      await using upstream = Deno.serve(
        { hostname: "127.0.0.1", port: 0, onListen: () => {} },
        () => Response.json({ ok: true }),
      );
      await using serve = new Serve({
        GATEWAY_POLICY: file,
        UPSTREAM_URL: `http://127.0.0.1:${upstream.addr.port}`,
        STORE_KIND: "redis",
        STORE_URL: cluster.urls[0],
      });
      await serve.started();
      const answers = await Promise.all(Array.from({ length: 20 }, async () => {
        const response = await fetch(`${serve.url}/v1/consents/c-1/status`, {
          headers: { "x-request-id": crypto.randomUUID(), connection: "close" },
          signal: AbortSignal.timeout(10_000),
        });
        await response.body?.cancel();
        return response.status;
      }));
      assert.deepEqual(answers.filter((status) => status !== 200), [], answers.join(" "));

      serve.child.kill("SIGTERM");
      // Each worker closes its cluster connections: the process ends well before the 30 s the
      // client's sockets held it alive (10 s only bounds a failing run).
      let timer: ReturnType<typeof setTimeout> | undefined;
      const ended = await Promise.race([
        serve.child.status.then((status) => status.code),
        new Promise<string>((resolve) =>
          timer = setTimeout(() => resolve("still running"), 10_000)
        ),
      ]);
      clearTimeout(timer);
      assert.equal(ended, 0);
      const stopped = await serve.until((line) => line.msg === "xs2a-edge stopped (SIGTERM)", 2);
      assert.equal(workersOf(stopped).size, 2);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
