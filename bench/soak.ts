/**
 * `deno task soak`: the gateway under steady load for a bounded time, its resident memory
 * sampled as it goes; exits non-zero when memory grows or a request fails.
 *
 * In one process tree on 127.0.0.1: the bench's upstream (bench/upstream.ts), the gateway
 * (main.ts with config/policy.yaml; the memory store, or with SOAK_STORE=redis a redis-server of
 * the soak's own) and the load generator (bench/soak_load.ts: many TPPs by client address, a fresh
 * X-Request-ID on every request, account reads and payment initiations), each its own process.
 *
 * X-Request-IDs are kept for SOAK_RETENTION (15s, the default policy's 24h otherwise), so that the
 * store holds a steady window of records (the memory store never evicts one inside its retention;
 * a full store refuses writes); SOAK_FILL sends that many payment initiations first.
 *
 * Verdicts on the gateway process:
 * - resident memory (VmRSS of /proc/<pid>/status, sampled every SOAK_SAMPLE_SECONDS): the median
 *   of the last quarter of the run against the median of the second quarter (the first quarter
 *   is warm-up). RSS holds the heap V8 keeps committed between collections (up to about 4x the
 *   live heap when memory is plentiful), which moves in steps: the tolerance covers that.
 * - the live heap, exactly: a full collection forced through the inspector in the middle of the
 *   warm-up quarter and again shortly before the end, both under load. This is the sharp measure
 *   of a leak (a few bytes per request over a long run).
 * For information, the series also shows the live heap after V8's own latest full collection
 * (from `--trace-gc` on the gateway's stdout, a print-only flag).
 *
 * Environment (defaults in brackets): SOAK_SECONDS [600], SOAK_STORE [memory] (or redis),
 * SOAK_RATE [1000000 / SOAK_SECONDS: requests per second aimed at], SOAK_CONNECTIONS [32],
 * SOAK_TPPS [10000], SOAK_PSUS [100000], SOAK_PAYMENTS [0.5: share of payment initiations],
 * SOAK_PER_CONNECTION [100: requests before a connection moves to the next TPP address],
 * SOAK_FILL [0], SOAK_RETENTION [15s; at least 5s], SOAK_SAMPLE_SECONDS [SOAK_SECONDS / 60,
 * 1 to 10], SOAK_RSS_TOLERANCE [10: percent of the RSS compared against; at least 32 MB and 3x
 * the live heap], SOAK_HEAP_TOLERANCE [5: percent, at least 8 MB], SOAK_V8_FLAGS [none: more V8
 * flags for the gateway, comma-separated].
 */
import { PIPELINE } from "../middleware/mod.ts";
import { V8_FLAGS } from "../src/lib/v8_flags.ts";
import { freePort, waitForPort } from "./ports.ts";
import { parsePolicy } from "../src/policy/load.ts";
import type { LoadOptions, LoadTotals } from "./soak_load.ts";

const env = (name: string, fallback: number) => Number(Deno.env.get(name) ?? fallback);
const seconds = env("SOAK_SECONDS", 600);
const storeKind = Deno.env.get("SOAK_STORE") ?? "memory";
const rate = env("SOAK_RATE", Math.ceil(1_000_000 / seconds));
const connections = env("SOAK_CONNECTIONS", 32);
const tpps = env("SOAK_TPPS", 10_000);
const psus = env("SOAK_PSUS", 100_000);
const payments = env("SOAK_PAYMENTS", 0.5);
const perConnection = env("SOAK_PER_CONNECTION", 100);
const sampleSeconds = env(
  "SOAK_SAMPLE_SECONDS",
  Math.min(10, Math.max(1, Math.round(seconds / 60))),
);
const rssTolerance = { percent: env("SOAK_RSS_TOLERANCE", 10), floorMb: 32 };
const heapTolerance = { percent: env("SOAK_HEAP_TOLERANCE", 5), floorMb: 8 };
const v8Flags = ["--trace-gc", ...(Deno.env.get("SOAK_V8_FLAGS") ?? "").split(",")]
  .filter((flag) => flag !== "");
const policyFile = "config/policy.yaml";
const root = new URL("..", import.meta.url).pathname;
const metricsToken = crypto.randomUUID();

if (storeKind !== "memory" && storeKind !== "redis") {
  console.error(`SOAK_STORE must be memory or redis, not "${storeKind}"`);
  Deno.exit(2);
}

const children: Deno.ChildProcess[] = [];

function stopAll() {
  for (const child of children) {
    try {
      child.kill("SIGTERM");
    } catch { /* already gone */ }
  }
}
Deno.addSignalListener("SIGINT", () => {
  stopAll();
  Deno.exit(130);
});

function spawnDeno(args: string[], env: Record<string, string> = {}, stdout = false) {
  const inspected = args.some((arg) => arg.startsWith("--inspect"));
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", V8_FLAGS, "--allow-all", ...args],
    env,
    cwd: root,
    stdout: stdout ? "piped" : "null",
    stderr: inspected ? "piped" : "inherit",
  }).spawn();
  children.push(child);
  if (inspected) {
    // The inspector's own messages are noise here; the gateway's errors are passed on.
    (async () => {
      for await (const line of lines(child.stderr)) {
        if (!/^(Debugger |Visit chrome:)/.test(line)) console.error(line);
      }
    })();
  }
  return child;
}

/** The lines of a byte stream. */
async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let rest = "";
  for await (const chunk of stream) {
    rest += decoder.decode(chunk, { stream: true });
    let newline;
    while ((newline = rest.indexOf("\n")) >= 0) {
      yield rest.slice(0, newline);
      rest = rest.slice(newline + 1);
    }
  }
  if (rest) yield rest;
}

/** Resident memory of a process, in MB (0 when it is gone). */
async function rssMb(pid: number): Promise<number> {
  try {
    const status = await Deno.readTextFile(`/proc/${pid}/status`);
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** The gateway's own counters, from /metrics. */
async function gatewayMetrics(port: number): Promise<Map<string, number>> {
  const values = new Map<string, number>();
  try {
    const response = await fetch(`http://127.0.0.1:${port}/metrics`, {
      headers: { authorization: `Bearer ${metricsToken}` },
    });
    for (const line of (await response.text()).split("\n")) {
      if (line.startsWith("#") || line === "") continue;
      const space = line.lastIndexOf(" ");
      values.set(line.slice(0, space), Number(line.slice(space + 1)));
    }
  } catch {
    // The gateway is gone: reported by the caller.
  }
  return values;
}

function sum(values: Map<string, number>, prefix: string): number {
  let total = 0;
  for (const [name, value] of values) if (name.startsWith(prefix)) total += value;
  return total;
}

/** A full collection of the gateway's heap: the live heap after it, in MB. */
interface Collection {
  /** Seconds on the soak's clock (see {@link clock}). */
  t: number;
  live: number;
  committed: number;
}

const MARK_COMPACT =
  /Mark-Compact(?: \([^)]*\))? ([\d.]+) \(([\d.]+)\) -> ([\d.]+) \(([\d.]+)\) MB/;

/**
 * Reads the gateway's stdout: access-log lines (JSON, dropped) and V8's `--trace-gc` lines. V8
 * writes through a C stdio buffer that may flush in the middle of a line, so a trace line can be
 * cut in two by a batch of log lines written between its halves: the halves are joined again.
 */
async function readGatewayOutput(stdout: ReadableStream<Uint8Array>, into: Collection[]) {
  let pending = "";
  for await (const line of lines(stdout)) {
    const json = line.indexOf('{"');
    if (json === 0) continue;
    if (json > 0) {
      pending += line.slice(0, json);
      continue;
    }
    const text = pending + line;
    pending = "";
    const match = MARK_COMPACT.exec(text);
    if (match) into.push({ t: clock(), live: Number(match[3]), committed: Number(match[4]) });
  }
}

/**
 * The gateway's live heap, exactly: a full, non-incremental collection through the inspector
 * (`HeapProfiler.collectGarbage`), then `Runtime.getHeapUsage`. In MB.
 */
async function inspector(port: number) {
  const [{ webSocketDebuggerUrl }] = await (await fetch(`http://127.0.0.1:${port}/json/list`))
    .json();
  const socket = new WebSocket(webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  let id = 0;
  const waiting = new Map<number, (result: Record<string, number>) => void>();
  socket.onmessage = (event) => {
    const message = JSON.parse(event.data);
    waiting.get(message.id)?.(message.result);
    waiting.delete(message.id);
  };
  const call = (method: string) =>
    new Promise<Record<string, number>>((resolve) => {
      waiting.set(++id, resolve);
      socket.send(JSON.stringify({ id, method }));
    });
  return {
    async liveHeapMb(): Promise<number> {
      await call("HeapProfiler.collectGarbage");
      return (await call("Runtime.getHeapUsage")).usedSize / 1024 / 1024;
    },
    close: () => socket.close(),
  };
}

/** A redis-server of the soak's own, and a way to ask it things. */
async function redisServer() {
  const port = freePort();
  children.push(
    new Deno.Command("redis-server", {
      args: ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      stdout: "null",
      stderr: "null",
    }).spawn(),
  );
  await waitForPort(port);
  const cli = async (...args: string[]) => {
    const output = await new Deno.Command("redis-cli", {
      args: ["-p", String(port), ...args],
      stdout: "piped",
      stderr: "null",
    }).output();
    return new TextDecoder().decode(output.stdout).trim();
  };
  return { url: `redis://127.0.0.1:${port}`, cli };
}

/** Runs the load generator; `onProgress` sees its running totals every second. */
async function load(
  options: LoadOptions,
  onProgress: (totals: LoadTotals) => void,
): Promise<LoadTotals> {
  const child = spawnDeno(["bench/soak_load.ts", JSON.stringify(options)], {}, true);
  let done: LoadTotals | undefined;
  for await (const line of lines(child.stdout)) {
    const message = JSON.parse(line) as { progress?: LoadTotals; done?: LoadTotals };
    if (message.progress) onProgress(message.progress);
    if (message.done) done = message.done;
  }
  const status = await child.status;
  if (!done || !status.success) throw new Error(`the load generator failed (${status.code})`);
  return done;
}

/** Seconds since the current phase started. */
let phaseStart = performance.now();
function clock(): number {
  return (performance.now() - phaseStart) / 1000;
}

interface Sample {
  t: number;
  rss: number;
  answered: number;
}

/** Measured right after a forced full collection, in MB. */
interface Probe {
  t: number;
  /** The live heap. */
  live: number;
  /** Resident memory (V8 returns its free pages after a forced collection). */
  rss: number;
}

/**
 * Runs one phase of load, sampling the gateway's RSS every `sampleSeconds` and printing each
 * sample with the live heap after the latest full collection and the store's size.
 */
async function phase(
  pid: number,
  collections: Collection[],
  storeSize: () => Promise<string>,
  options: LoadOptions,
  probe?: { at: number[]; liveHeapMb: () => Promise<number> },
): Promise<
  { totals: LoadTotals; samples: Sample[]; collections: Collection[]; probes: Probe[] }
> {
  phaseStart = performance.now();
  const firstCollection = collections.length;
  const samples: Sample[] = [];
  const probes: Probe[] = [];
  const probeTimers = (probe?.at ?? []).map((t, i) =>
    setTimeout(async () => {
      const live = await probe!.liveHeapMb();
      probes[i] = { t: clock(), live, rss: await rssMb(pid) };
      console.log(
        `${"".padStart(6)}  forced full collection at ${t.toFixed(0)} s: live heap ${
          mb(live)
        } MB, RSS ${mb(probes[i].rss)} MB`,
      );
    }, t * 1000)
  );
  let latest = 0;
  let previous = { t: 0, answered: 0 };
  console.log(
    `${"t s".padStart(6)}  ${"RSS MB".padStart(8)}  ${"heap MB".padStart(8)}  ${
      "answered".padStart(10)
    }  ${"req/s".padStart(7)}  ${(storeKind === "redis" ? "redis keys" : "entries").padStart(9)}`,
  );
  const timer = setInterval(async () => {
    const t = clock();
    const sample = { t, rss: await rssMb(pid), answered: latest };
    samples.push(sample);
    const rateNow = (sample.answered - previous.answered) / (t - previous.t);
    previous = { t, answered: sample.answered };
    const heap = collections.length > firstCollection ? collections.at(-1)!.live.toFixed(1) : "-";
    console.log(
      `${t.toFixed(0).padStart(6)}  ${sample.rss.toFixed(1).padStart(8)}  ${heap.padStart(8)}  ${
        String(sample.answered).padStart(10)
      }  ${rateNow.toFixed(0).padStart(7)}  ${(await storeSize()).padStart(9)}`,
    );
  }, sampleSeconds * 1000);
  try {
    const totals = await load(options, (progress) => latest = progress.answered);
    return { totals, samples, collections: collections.slice(firstCollection), probes };
  } finally {
    clearInterval(timer);
    probeTimers.forEach(clearTimeout);
  }
}

/** Median of the second and of the last quarter of a phase, and the change between them. */
function quarters<T extends { t: number }>(items: T[], value: (item: T) => number) {
  const quarter = (q: number) =>
    items.filter((s) => s.t > (q - 1) * seconds / 4 && s.t <= q * seconds / 4).map(value);
  const [q2, q4] = [quarter(2), quarter(4)];
  if (q2.length === 0 || q4.length === 0) return undefined;
  return { second: median(q2), last: median(q4), change: median(q4) - median(q2), n: q2.length };
}

/** Requests answered by time `t` (from the nearest sample before it). */
function samplesAnswered(samples: Sample[], t: number): number {
  return samples.filter((s) => s.t <= t).at(-1)?.answered ?? 0;
}

const mb = (value: number) => value.toFixed(1);
const signed = (value: number) => `${value >= 0 ? "+" : ""}${mb(value)}`;

const problems: string[] = [];
try {
  const upstreamPort = freePort();
  spawnDeno(["bench/upstream.ts", String(upstreamPort)]);
  await waitForPort(upstreamPort);

  // The default policy keeps X-Request-IDs for 24 h, and the memory store never evicts one inside
  // its retention (a full store refuses new writes): a soak of a million ids would fill it and then
  // measure refusals. The soak keeps them for SOAK_RETENTION (15s) instead, so the store holds a
  // steady window of records.
  const soakPolicy = await Deno.makeTempFile({ prefix: "soak-policy-", suffix: ".yaml" });
  await Deno.writeTextFile(
    soakPolicy,
    (await Deno.readTextFile(`${root}${policyFile}`)).replace(
      "retention: 24h",
      // The in-flight bound (60s by default) must not exceed the retention, nor be shorter than
      // the wait (5s); the soak's upstream answers in milliseconds.
      `retention: ${Deno.env.get("SOAK_RETENTION") ?? "15s"}\n    inflight: 5s`,
    ),
  );
  const gatewayEnv: Record<string, string> = {
    GATEWAY_POLICY: soakPolicy,
    UPSTREAM_URL: `http://127.0.0.1:${upstreamPort}`,
    METRICS_TOKEN: metricsToken,
    GATEWAY_WATCH: "false",
  };
  const redis = storeKind === "redis" ? await redisServer() : undefined;
  if (redis) Object.assign(gatewayEnv, { STORE_KIND: "redis", STORE_URL: redis.url });
  const policy = parsePolicy(soakPolicy, await Deno.readTextFile(soakPolicy), {
    ...PIPELINE,
    env: (name) => gatewayEnv[name] ?? Deno.env.get(name),
  });
  const maxEntries = policy.store.max_entries;
  // No fill by default: within the retention the records cannot be evicted, so a fill to the cap
  // would leave the store refusing writes until they expire.
  const fill = env("SOAK_FILL", 0);

  const port = freePort();
  const inspectPort = freePort();
  const gateway = spawnDeno([
    `--v8-flags=${v8Flags.join(",")}`,
    `--inspect=127.0.0.1:${inspectPort}`,
    "main.ts",
  ], {
    ...gatewayEnv,
    PORT: String(port),
  }, true);
  let exited = false;
  gateway.status.then(() => exited = true);
  const collections: Collection[] = [];
  const reading = readGatewayOutput(gateway.stdout, collections);
  await waitForPort(port);
  const heap = await inspector(inspectPort);
  const target = `http://127.0.0.1:${port}`;
  const base = { target, connections, tpps, firstTpp: 0, perConnection, psus };
  const storeSize = async () =>
    redis
      ? await redis.cli("DBSIZE")
      : String((await gatewayMetrics(port)).get("xs2a_store_entries") ?? "-");

  console.log(
    `soak: gateway (${policyFile}, ${storeKind} store) pid ${gateway.pid}, ${seconds} s at up to ` +
      `${rate} req/s, ${connections} connections, ${tpps} TPP addresses (${perConnection} ` +
      `requests per connection), ${psus} PSUs, ${Math.round(payments * 100)}% payment ` +
      `initiations, RSS every ${sampleSeconds} s; RSS at start ${mb(await rssMb(gateway.pid))} MB`,
  );

  let filled: LoadTotals | undefined;
  if (fill > 0) {
    console.log(
      `fill: ${fill} payment initiations, as fast as answered (the memory store holds ` +
        `${maxEntries} entries)`,
    );
    filled = (await phase(gateway.pid, collections, storeSize, {
      ...base,
      seconds: 0,
      requests: fill,
      rate: 0,
      payments: 1,
    })).totals;
    console.log(
      `fill done: ${filled.answered} answered in ${filled.seconds.toFixed(0)} s, ` +
        `RSS ${mb(await rssMb(gateway.pid))} MB`,
    );
  }

  console.log(`run: ${seconds} s (heap: live heap after the latest full collection)`);
  // The exact live heap in the middle of the warm-up quarter and shortly before the end, both
  // under load. A forced collection moves V8's heap limits (RSS drops, then settles again within
  // seconds): the first one is in the warm-up, and RSS samples after the last one do not count.
  const probeAt = [seconds / 8, seconds - Math.min(5, seconds / 20)];
  const run = await phase(gateway.pid, collections, storeSize, {
    ...base,
    seconds,
    requests: 0,
    rate,
    payments,
  }, { at: probeAt, liveHeapMb: heap.liveHeapMb });
  heap.close();
  const totals = run.totals;
  const metrics = await gatewayMetrics(port);

  const count = (t?: LoadTotals) =>
    t ? t.answered + Object.values(t.failed).reduce((a, b) => a + b, 0) : 0;
  const statuses: Record<string, number> = { ...totals.statuses };
  for (const [status, n] of Object.entries(filled?.statuses ?? {})) {
    statuses[status] = (statuses[status] ?? 0) + n;
  }
  const failed = { ...filled?.failed };
  for (const [name, n] of Object.entries(totals.failed)) failed[name] = (failed[name] ?? 0) + n;
  const errors = Object.entries(statuses).filter(([status]) => !status.startsWith("2"));

  console.log("");
  console.log(
    `requests: ${totals.answered} answered in ${totals.seconds.toFixed(0)} s (${
      (totals.answered / totals.seconds).toFixed(0)
    } req/s; aimed at ${rate})${filled ? `, plus ${filled.answered} in the fill` : ""}`,
  );
  console.log(
    `distinct X-Request-IDs sent: ${count(filled) + count(totals)}; TPP addresses: ${
      Math.max(totals.tpps, filled?.tpps ?? 0)
    }; connections: ${totals.connections + (filled?.connections ?? 0)}; replays: ${
      totals.replays + (filled?.replays ?? 0)
    } (0 expected)`,
  );
  console.log(
    `by status: ${JSON.stringify(statuses)}; run: reads ${
      JSON.stringify(totals.byKind.read)
    }, payments ${JSON.stringify(totals.byKind.payment)}`,
  );
  console.log(
    `errors: ${errors.length ? JSON.stringify(Object.fromEntries(errors)) : "none"}; ` +
      `requests without an answer: ${Object.keys(failed).length ? JSON.stringify(failed) : "none"}`,
  );
  console.log(
    `gateway counters: ${sum(metrics, "xs2a_requests_total")} requests, ${
      sum(metrics, "xs2a_store_round_trips_total")
    } store round trips, ${sum(metrics, "xs2a_store_fail_open_total")} let through fail-open`,
  );
  if (redis) {
    const memory = /used_memory_human:(\S+)/.exec(await redis.cli("INFO", "memory"))?.[1];
    console.log(`store: redis, ${await redis.cli("DBSIZE")} keys, ${memory} used`);
  } else {
    console.log(
      `store: memory, ${
        metrics.get("xs2a_store_entries") ?? "(not exported)"
      } entries held (max_entries ${maxEntries})`,
    );
  }

  // Verdicts: the second quarter (after warm-up) against the last quarter.
  const rss = quarters(run.samples.filter((s) => s.t < probeAt[1]), (s) => s.rss);
  const answered = quarters(run.samples, (s) => s.answered);
  const between = answered ? answered.change : 0;
  /** The smallest leak per request that a tolerance lets through. */
  const perRequest = (toleranceMb: number, requests = between) =>
    requests > 0
      ? ` (catches a leak of ${(toleranceMb * 1024 * 1024 / requests).toFixed(0)} B/request)`
      : "";
  let growing = false;
  const judge = (what: string, before: number, after: number, tolerance: number, n: number) => {
    const change = after - before;
    console.log(
      `${what}: ${mb(before)} MB -> ${mb(after)} MB, change ${signed(change)} MB over ${n} ` +
        `requests; tolerance ${mb(tolerance)} MB${perRequest(tolerance, n)}`,
    );
    if (change > tolerance) {
      growing = true;
      problems.push(`${what} grows: ${signed(change)} MB > ${mb(tolerance)} MB`);
    }
  };
  const traced = quarters(run.collections, (c) => c.live);
  const committed = Math.max(0, ...run.collections.map((c) => c.committed));
  if (traced) {
    console.log(
      `live heap after V8's own full collections (${run.collections.length}; information ` +
        `only), median: second quarter ${mb(traced.second)} MB, last quarter ${
          mb(traced.last)
        } MB; V8's committed heap at most ${mb(committed)} MB`,
    );
  }
  const [first, last] = run.probes;
  /** What RSS may move by without a leak: the tolerance, and 3x the live heap. */
  const rssSlack = (base: number) =>
    Math.max(rssTolerance.floorMb, base * rssTolerance.percent / 100, 3 * (first?.live ?? 0));
  if (!rss) {
    problems.push(`too few RSS samples for a verdict (${run.samples.length}); run longer`);
  } else {
    // V8 lets its committed heap grow to about 4x the live heap between full collections when
    // memory is plentiful, and keeps it for a while: RSS may move by 3x the live heap with no
    // leak at all (measured: committed 574 MB at 129-135 MB live; RSS medians of 150-s quarters
    // within 30 MB, single excursions of +310 MB lasting 90 s).
    judge(
      "RSS, median of the second -> last quarter",
      rss.second,
      rss.last,
      rssSlack(rss.second),
      between,
    );
  }
  if (!first || !last) {
    problems.push(`no forced full collections (${run.probes.length} of 2)`);
  } else {
    const n = samplesAnswered(run.samples, last.t) - samplesAnswered(run.samples, first.t);
    const at = `at ${first.t.toFixed(0)} s -> ${last.t.toFixed(0)} s`;
    judge(
      `live heap after a forced full collection, ${at}`,
      first.live,
      last.live,
      Math.max(heapTolerance.floorMb, first.live * heapTolerance.percent / 100),
      n,
    );
    // A forced collection does not give V8's committed pages and malloc's arenas back at once:
    // early in a short run RSS after one still grows towards its steady state (measured: +164 MB
    // from 4 s to 29 s at a flat live heap; -61 MB from 75 s to 595 s), so the same slack applies.
    judge(`RSS after a forced full collection, ${at}`, first.rss, last.rss, rssSlack(first.rss), n);
  }
  if (exited) problems.push("the gateway died during the run");
  // Every request sent is valid: any other answer than 2xx is a failure of the gateway.
  if (errors.length) problems.push(`answers other than 2xx: ${JSON.stringify(errors)}`);
  if (Object.keys(failed).length) {
    problems.push(`requests without an answer: ${JSON.stringify(failed)}`);
  }
  console.log(
    `verdict: memory ${growing ? "GROWING" : rss ? "flat" : "not judged"}${
      problems.length ? `; FAILED: ${problems.join("; ")}` : ""
    }`,
  );
  stopAll();
  await reading;
} catch (error) {
  problems.push(String(error));
  console.error(error);
} finally {
  stopAll();
  await Promise.all(children.map((child) => child.status.catch(() => {})));
}
Deno.exit(problems.length ? 1 : 0);
