/**
 * The container files against the README: compose.yaml sets every variable the policy it mounts
 * needs (the README's production variables), the Dockerfile watches the policy file and has a
 * HEALTHCHECK. No Docker engine runs here, so the services are then run as compose would, with
 * Deno and redis-server directly: the test CA service's command, Redis with the redis service's
 * arguments, the sandbox service's command, and the image's CMD with compose's environment (its
 * container paths and service names mapped to this machine's); the gateway starts, its HEALTHCHECK
 * command passes, and it stops on SIGTERM.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { readUntil, startMain } from "./support/main_process.ts";
import { closedPort } from "./support/upstream.ts";
import { startRedisServer } from "./support/redis.ts";

interface Service {
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  network_mode?: string;
  healthcheck?: unknown;
}

const compose = parse(await Deno.readTextFile("compose.yaml")) as {
  services: Record<string, Service>;
};
const dockerfile = await Deno.readTextFile("Dockerfile");
const readme = await Deno.readTextFile("README.md");

/** The Dockerfile's instructions (continuation lines joined), comments left out. */
const instructions = dockerfile.replace(/\\\n\s*/g, "").split("\n")
  .filter((line) => line.trim() !== "" && !line.startsWith("#"));

/** The JSON array of an exec-form instruction (`CMD [...]`, `HEALTHCHECK ... CMD [...]`). */
function execForm(line: string): string[] {
  return JSON.parse(line.slice(line.indexOf("[")));
}

/** `${NAME}` and `${NAME:-default}` of compose: the default where unset here (as compose does). */
function composeValue(value: string): string {
  return value.replace(
    /\$\{([A-Z_]+):-([^}]*)\}/g,
    (_, name, fallback) => Deno.env.get(name) ?? fallback,
  );
}

/** The `${NAME}` references without a default of a policy file. */
function requiredVariables(text: string): Set<string> {
  const found = new Set<string>();
  for (const line of text.split("\n")) {
    if (line.trimStart().startsWith("#")) continue;
    for (const [, name] of line.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)) found.add(name);
  }
  return found;
}

const gateway = compose.services.gateway;
/** Where compose mounts each host path: container path -> host path (named volumes left out). */
const mounts = new Map(
  (gateway.volumes ?? []).map((volume) => volume.split(":")).filter(([from]) =>
    from.startsWith(".")
  ).map(([from, to]) => [to, from]),
);
const policyMount = mounts.get("/etc/xs2a-edge/policy.yaml");

Deno.test("compose.yaml sets every variable its policy needs, each named in the README", async () => {
  assert.ok(policyMount, "compose mounts the policy file where the image's CMD reads it");
  const cmd = execForm(instructions.find((line) => line.startsWith("CMD"))!);
  assert.deepEqual(cmd.slice(cmd.indexOf("--policy")), ["--policy", "/etc/xs2a-edge/policy.yaml"]);
  const needed = requiredVariables(await Deno.readTextFile(policyMount));
  assert.ok(needed.size >= 9, [...needed].join(" "));
  for (const name of needed) {
    assert.ok(gateway.environment?.[name], `compose.yaml sets ${name}`);
    assert.ok(readme.includes(`\`${name}\``), `the README names ${name}`);
  }
});

Deno.test("compose.yaml runs Redis with append-only persistence on a volume, and a test CA", () => {
  const redis = compose.services.redis;
  const args = redis.command!.join(" ");
  assert.match(args, /--appendonly yes/);
  assert.ok(redis.volumes?.some((volume) => volume.endsWith(":/data")));
  assert.ok(redis.healthcheck, "the gateway waits for Redis to answer");
  const ca = compose.services["test-ca"];
  assert.ok(ca.command?.includes("src/cli/test_ca.ts"));
  assert.match(gateway.environment!.QTSP_CA_BUNDLE, /^\/etc\/xs2a-edge\/ca\//);
  assert.ok(gateway.volumes?.includes("test-ca:/etc/xs2a-edge/ca:ro"));
  assert.equal(compose.services.sandbox.network_mode, "service:gateway");
});

Deno.test("the Dockerfile watches the policy file and has a HEALTHCHECK on /healthz", () => {
  const env = instructions.filter((line) => line.startsWith("ENV")).join(" ");
  // The README promises reloads on ConfigMap swaps: watching stays on (GATEWAY_WATCH's default).
  assert.doesNotMatch(env, /GATEWAY_WATCH=false/);
  assert.match(readme, /ConfigMap swaps/);
  const check = instructions.find((line) => line.startsWith("HEALTHCHECK"));
  assert.ok(check, "a HEALTHCHECK");
  assert.match(check, /\/healthz/);
});

Deno.test({
  name: "compose.yaml's services, run as compose would, start the gateway and pass its HEALTHCHECK",
  ignore: Deno.env.get("SKIP_REDIS") === "1",
  async fn() {
    const dir = await Deno.makeTempDir();
    try {
      // The test CA, as its service makes it (its volume: a directory here).
      const ca = compose.services["test-ca"].command!.map((arg) => arg.replaceAll("/ca", dir));
      const made = await new Deno.Command(Deno.execPath(), { args: ca, stdout: "null" }).output();
      assert.equal(made.code, 0);

      // Redis with the service's own arguments.
      const redisArgs = compose.services.redis.command!.slice(1);
      await using redis = await startRedisServer({ args: [...redisArgs, "--dir", dir] });

      // The sandbox, with its service's command, on a free port in place of 8081.
      const sandboxPort = closedPort();
      const sandbox = new Deno.Command(Deno.execPath(), {
        args: compose.services.sandbox.command!,
        env: { SANDBOX_PORT: String(sandboxPort) },
        stdout: "piped",
        stderr: "null",
      }).spawn();
      try {
        const listening = sandbox.stdout.pipeThrough(new TextDecoderStream()).getReader();
        assert.match((await listening.read()).value ?? "", /listening on/);
        await listening.cancel();

        // The gateway: the image's CMD and ENV with compose's environment, paths and hosts mapped.
        const map = (value: string) =>
          value.replace("/etc/xs2a-edge/ca", dir).replace("/app/config", "config")
            .replace("redis://redis:6379", redis.url)
            .replace("http://127.0.0.1:8081", `http://127.0.0.1:${sandboxPort}`);
        const env: Record<string, string> = { ...Deno.env.toObject() };
        for (const line of instructions.filter((line) => line.startsWith("ENV"))) {
          for (const [, name, value] of line.matchAll(/([A-Z_]+)=(\S+)/g)) env[name] = value;
        }
        for (const [name, value] of Object.entries(gateway.environment!)) {
          env[name] = map(composeValue(value));
        }
        const port = closedPort();
        Object.assign(env, { PORT: String(port), HOST: "127.0.0.1", GATEWAY_DATA_DIR: dir });
        const cmd = execForm(instructions.find((line) => line.startsWith("CMD"))!)
          .map((arg) => arg.replace("/var/lib/xs2a-edge", dir))
          .map((arg) => arg === "/etc/xs2a-edge/policy.yaml" ? policyMount! : arg);
        const main = await startMain(cmd.slice(cmd.indexOf("main.ts") + 1), {
          env,
          clearEnv: true,
          entry: "main.ts",
        });
        try {
          assert.match(main.said, /xs2a-edge on http:\/\/127\.0\.0\.1:/, main.said);
          // The HEALTHCHECK's command, as Docker runs it in the container.
          const health = execForm(instructions.find((line) => line.startsWith("HEALTHCHECK"))!);
          const checked = await new Deno.Command(
            health[0] === "deno" ? Deno.execPath() : health[0],
            {
              args: health.slice(1),
              env: { PORT: String(port) },
              stdout: "null",
              stderr: "piped",
            },
          ).output();
          assert.equal(checked.code, 0, new TextDecoder().decode(checked.stderr));
        } finally {
          main.child.kill("SIGTERM");
          await readUntil(main);
          assert.equal((await main.child.status).code, 0);
          await main.child.stdout.cancel();
        }
      } finally {
        sandbox.kill("SIGTERM");
        await sandbox.status;
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
