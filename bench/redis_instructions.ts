/**
 * What one decision costs Redis, in instructions: redis-server runs under callgrind (valgrind)
 * and the decision script decides batches of 10 decisions of each shape; the instructions Redis
 * executed between two dumps, over the decisions, are the shape's cost. Unlike CPU time on a
 * shared machine, the count repeats to within 1 % from run to run, so two scripts compare in one
 * run however loaded the machine is.
 *
 *   deno run -A bench/redis_instructions.ts [other decide.ts]
 *
 * With another tree's `src/store/lua/decide.ts` (e.g. a worktree of an earlier commit), both
 * scripts run each shape in turn. Needs valgrind (`apt-get install -y valgrind`); Redis runs as
 * production runs it (append-only file, `appendfsync everysec`). `DECISIONS` sets how many
 * decisions a shape runs (default 2000).
 */
import { createClient } from "redis";
import { freePort, waitForPort } from "./ports.ts";
import * as current from "../src/store/lua/decide.ts";
import type { Decision, LimitPart } from "../src/store/types.ts";

type Script = Pick<typeof current, "DECIDE_SCRIPT" | "encodeDecisions">;

const BATCH = 10;
const decisions = Number(Deno.env.get("DECISIONS") ?? 2000);
const DAY = 86_400_000;

const claim = (mode: "unique" | "replay") => ({
  key: `tpp:${crypto.randomUUID()}`,
  mode,
  fingerprint: "f".repeat(43),
  token: crypto.randomUUID(),
  enforce: true,
  inflightMs: 30_000,
  retentionMs: DAY,
});
const limit = (key: string) => ({
  name: key,
  key,
  limit: 1e9,
  windowMs: 60_000,
  burst: 1e9,
  enforce: true,
});
const today = Math.floor(Date.now() / DAY) * DAY;

/** A consent counter's part: the consent `consentKey`, today and the days beside it. */
const counter = (consentKey: string, unknownLimit: number) => ({
  consentKey,
  days: [-1, 0, 1].map((k) => ({
    key: `day:c1:${k}`,
    start: today + k * DAY,
    end: today + (k + 1) * DAY,
  })),
  max: 1e6,
  unknownLimit,
  psuInitiated: false,
  enforce: true,
});

/** The production read: a unique X-Request-ID, the limits given, a counted read. */
const productionRead = (limits: LimitPart[]) => () => ({
  idempotency: claim("unique"),
  limits,
  frequency: counter("consent:c1", 4),
});

/** The shapes of the bench's rows: what a request of each asks the store. */
const SHAPES: Record<string, () => Decision> = {
  "a read (one limit)": () => ({ limits: [limit("rl:tpp")] }),
  "the default read (a limit, a consent it does not know)": () => ({
    limits: [limit("rl:tpp")],
    frequency: counter("consent:unknown", 0),
  }),
  "the default read, its limit leased": () => ({
    limits: [],
    frequency: counter("consent:unknown", 0),
  }),
  "a unique X-Request-ID": () => ({ idempotency: claim("unique"), limits: [] }),
  "a payment (replayable, one limit)": () => ({
    idempotency: claim("replay"),
    limits: [limit("rl:tpp")],
  }),
  "the production read (unique, two limits, a counted read)": productionRead([
    limit("rl:tpp"),
    limit("rl:tpp:psu"),
  ]),
  "the production read, its limits leased": productionRead([]),
};

let dumps = 0;

/** Has callgrind dump the counts since its last dump; their total of instructions. */
async function dump(dir: string, pid: number): Promise<number> {
  const done = await new Deno.Command("callgrind_control", { args: ["-d", String(pid)] }).output();
  if (!done.success) throw new Error("callgrind_control could not dump");
  dumps++;
  const text = await Deno.readTextFile(`${dir}/callgrind.out.${dumps}`);
  const total = /^summary: (\d+)$/m.exec(text);
  if (!total) throw new Error(`no summary in dump ${dumps}`);
  return Number(total[1]);
}

const scripts: [string, Script][] = [["this tree", current]];
if (Deno.args[0]) {
  scripts.push(["the other", await import(new URL(Deno.args[0], `file://${Deno.cwd()}/`).href)]);
}

const dir = await Deno.makeTempDir({ prefix: "redis_instructions_" });
const port = freePort();
const redis = new Deno.Command("valgrind", {
  args: [
    "--tool=callgrind",
    `--callgrind-out-file=${dir}/callgrind.out`,
    "redis-server",
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--appendonly",
    "yes",
    "--appendfsync",
    "everysec",
    "--dir",
    dir,
  ],
  stdout: "null",
  stderr: "null",
}).spawn();
const client = createClient({ url: `redis://127.0.0.1:${port}` });
try {
  await waitForPort(port, 60_000);
  await client.connect();
  await client.set("bench:consent:c1", "1|1000000"); // recurring, a million reads a day

  for (const [shape, make] of Object.entries(SHAPES)) {
    for (const [name, script] of scripts) {
      const sha = await client.scriptLoad(script.DECIDE_SCRIPT);
      const run = async (count: number) => {
        for (let done = 0; done < count; done += BATCH) {
          const batch = Array.from({ length: BATCH }, make);
          const { keys, args } = script.encodeDecisions(batch, "bench:");
          await client.evalSha(sha, { keys, arguments: args });
        }
      };
      await run(100); // every key of the shape exists, as under load
      await dump(dir, redis.pid);
      await run(decisions);
      const instructions = await dump(dir, redis.pid);
      console.log(
        `${shape.padEnd(58)} ${name.padEnd(11)} ${(instructions / decisions).toFixed(0)} ` +
          `instructions per decision`,
      );
    }
  }
} finally {
  await client.quit().catch(() => {});
  redis.kill("SIGTERM");
  await redis.status;
  await Deno.remove(dir, { recursive: true });
}
