/**
 * The test task: starts a throw-away redis-server on a free port when REDIS_URL is not given,
 * runs `deno test`, stops Redis. Under CI a missing redis-server is a failure, never a skip.
 */
const ci = Deno.env.get("CI") === "true";
const args = Deno.args.length > 0 ? Deno.args : ["tests/"];
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

if (!Deno.env.get("REDIS_URL")) {
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
    const text = `redis-server is not available (${(error as Error).message})`;
    if (ci) {
      console.error(`${text}: CI requires it (apt-get install -y redis-server)`);
      Deno.exit(1);
    }
    console.error(`${text}: tests that need Redis will be skipped`);
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
