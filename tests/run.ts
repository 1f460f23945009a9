/**
 * The test task: starts a throw-away redis-server on a free port when REDIS_URL is not given,
 * runs `deno test`, stops Redis. A redis-server that cannot start fails the run, never a skip,
 * unless the run says SKIP_REDIS=1 (then the Redis tests show as ignored).
 */
const skipRedis = Deno.env.get("SKIP_REDIS") === "1";
// The whole suite also runs the code blocks of ARCHITECTURE.md and of the JSDoc of the gateway's
// modules (`deno test --doc`), so that documented examples cannot drift from the code.
const args = Deno.args.length > 0
  ? Deno.args
  : ["--doc", "tests/", "src/", "middleware/", "ARCHITECTURE.md"];
const env: Record<string, string> = {};
let redis: Deno.ChildProcess | undefined;

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

async function waitForPort(port: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      return true;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return false;
}

if (skipRedis) {
  console.error("SKIP_REDIS=1: the tests that need Redis are skipped (counted as ignored)");
} else if (!Deno.env.get("REDIS_URL")) {
  const port = freePort();
  try {
    redis = new Deno.Command("redis-server", {
      args: ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      stdout: "null",
      stderr: "null",
    }).spawn();
    if (!await waitForPort(port, 5000)) throw new Error("redis-server did not start");
    env.REDIS_URL = `redis://127.0.0.1:${port}`;
  } catch (error) {
    try {
      redis?.kill("SIGKILL");
    } catch {
      // It never started, or has already ended.
    }
    console.error(
      `redis-server is not available (${
        (error as Error).message
      }): install it (apt-get install -y redis-server), set REDIS_URL, or skip the Redis tests explicitly with SKIP_REDIS=1`,
    );
    Deno.exit(1);
  }
}

const test = new Deno.Command(Deno.execPath(), {
  args: ["test", "--allow-all", "--frozen", ...args],
  env,
  stdout: "inherit",
  stderr: "inherit",
}).spawn();
const status = await test.status;
redis?.kill("SIGTERM");
await redis?.status;
Deno.exit(status.code);
