/**
 * Adaptive concurrency under growing load (`deno task bench:adaptive`): a core that slows down as
 * its load grows, behind the gateway with no limit, a fixed limit and the adaptive limits, driven
 * by more and more clients. Prints one Markdown table (docs/performance.md, "Adaptive
 * concurrency").
 *
 * The core: `CAPACITY` workers that take `SERVICE_MS` each; requests beyond them wait in its own
 * queue (a legacy core's thread pool), so its latency grows with what it holds and its throughput
 * stays at CAPACITY / SERVICE_MS. It runs in this process with the clients; the gateway runs in
 * its own (main.ts, the passthrough policy plus `upstream_limits`). Clients send
 * `GET /v1/products/deposits` one after the other and, after a 503, wait its Retry-After as a TPP
 * would. Bounded: loopback only, `STEP_SECONDS` (default 6) per step, four steps per mode.
 */
import { stringify } from "yaml";
import { metricsToken, spawn, stopAll } from "./load.ts";
import { freePort, waitForPort } from "./ports.ts";
import { passthroughPolicy, policyYaml } from "../tests/support/policies.ts";

const CAPACITY = 8;
const SERVICE_MS = 20;
/** Clients per step; the last step also halves the core's workers (a core degraded at peak). */
const STEPS = [
  { clients: 4, workers: CAPACITY },
  { clients: 16, workers: CAPACITY },
  { clients: 64, workers: CAPACITY },
  { clients: 256, workers: CAPACITY },
  { clients: 256, workers: CAPACITY / 2 },
];
const STEP_MS = Number(Deno.env.get("STEP_SECONDS") ?? "6") * 1000;
const PATH = "/v1/products/deposits";

const QUEUE = { max_queue: 256, queue_timeout: "500ms" };
const MODES: { name: string; limits?: Record<string, unknown> }[] = [
  { name: "no limit" },
  { name: "fixed 32", limits: { max_in_flight: 32, ...QUEUE } },
  {
    name: "gradient 4..64",
    limits: {
      max_in_flight: 32,
      ...QUEUE,
      adaptive: { algorithm: "gradient", min_in_flight: 4, max_in_flight: 64, window: "250ms" },
    },
  },
  {
    name: "aimd 4..64",
    limits: {
      max_in_flight: 32,
      ...QUEUE,
      adaptive: {
        algorithm: "aimd",
        min_in_flight: 4,
        max_in_flight: 64,
        window: "250ms",
        timeout: "50ms",
      },
    },
  },
];

/** What the core saw during one step. */
interface CoreStep {
  latencies: number[];
  maxHeld: number;
}

/** The core on 127.0.0.1: `workers` of SERVICE_MS, a FIFO queue in front of them. */
function startCore() {
  let workers = CAPACITY;
  let busy = 0;
  let held = 0;
  const waiting: (() => void)[] = [];
  const step: CoreStep = { latencies: [], maxHeld: 0 };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async () => {
    const arrived = performance.now();
    step.maxHeld = Math.max(step.maxHeld, ++held);
    if (busy < workers) busy++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    await new Promise((resolve) => setTimeout(resolve, SERVICE_MS));
    const next = busy <= workers ? waiting.shift() : undefined;
    if (next) next(); // the worker goes on to the next waiting request
    else busy--;
    held--;
    step.latencies.push(performance.now() - arrived);
    return Response.json({ products: [] });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    /** Sets the number of workers (those beyond it stop after their request). */
    staff(n: number) {
      workers = n;
      while (busy < workers && waiting.length > 0) {
        busy++;
        waiting.shift()!();
      }
    },
    /** The step so far, and a new one begun. */
    take(): CoreStep {
      const done = { latencies: step.latencies, maxHeld: step.maxHeld };
      step.latencies = [];
      step.maxHeld = held;
      return done;
    },
    close: () => server.shutdown(),
  };
}

/** What the clients saw during one step. */
interface ClientStep {
  ok: number;
  busy: number;
  other: number;
  latencies: number[];
}

/** `n` clients for `ms`, one request after the other, waiting Retry-After after a 503. */
async function drive(url: string, n: number, ms: number): Promise<ClientStep> {
  const until = performance.now() + ms;
  const seen: ClientStep = { ok: 0, busy: 0, other: 0, latencies: [] };
  await Promise.all(Array.from({ length: n }, async () => {
    while (performance.now() < until) {
      const started = performance.now();
      const response = await fetch(url + PATH).catch(() => undefined);
      await response?.body?.cancel();
      // Answers that end after the step are not counted (they would inflate its rate).
      if (performance.now() > until) break;
      if (response?.status === 200) {
        seen.ok++;
        seen.latencies.push(performance.now() - started);
      } else if (response?.status === 503) {
        seen.busy++;
        const wait = Number(response.headers.get("retry-after") ?? "1") * 1000;
        await new Promise((resolve) =>
          setTimeout(resolve, Math.min(wait, until - performance.now()))
        );
      } else {
        seen.other++;
      }
    }
  }));
  return seen;
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = values.toSorted((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

/** The gateway's current limit of the `core` pool (undefined without one). */
async function currentLimit(port: number): Promise<number | undefined> {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`, {
    headers: { authorization: `Bearer ${metricsToken}` },
  });
  const text = await response.text();
  const match = /^xs2a_upstream_limit\{pool="core"\} (\d+)$/m.exec(text);
  return match ? Number(match[1]) : undefined;
}

async function policyFile(limits: Record<string, unknown> | undefined): Promise<string> {
  const text = policyYaml(passthroughPolicy({
    defaults: {
      links: { rewrite: false },
      ...(limits ? { upstream_limits: { mode: "enforce", ...limits } } : {}),
    },
    metrics: { token: "${METRICS_TOKEN}" },
  }));
  const file = await Deno.makeTempFile({ suffix: ".yaml" });
  await Deno.writeTextFile(file, text);
  return file;
}

const core = startCore();
const rows: string[] = [];
const round = (n: number) => Number.isNaN(n) ? "-" : String(Math.round(n));
try {
  for (const mode of MODES) {
    const port = freePort();
    const policy = await policyFile(mode.limits);
    const pid = spawn(["main.ts"], {
      GATEWAY_POLICY: policy,
      UPSTREAM_URL: core.url,
      PORT: String(port),
      METRICS_TOKEN: metricsToken,
    });
    await waitForPort(port);
    const url = `http://127.0.0.1:${port}`;
    for (const { clients, workers } of STEPS) {
      core.staff(workers);
      core.take();
      const seen = await drive(url, clients, STEP_MS);
      const at = core.take();
      const limit = await currentLimit(port);
      const total = seen.ok + seen.busy + seen.other;
      rows.push(
        `| ${mode.name} | ${clients}${
          workers < CAPACITY ? `, core /${CAPACITY / workers}` : ""
        } | ${round(percentile(at.latencies, 0.5))} | ${
          round(percentile(at.latencies, 0.99))
        } | ${at.maxHeld} | ${limit ?? "-"} | ${round(seen.ok / (STEP_MS / 1000))} | ${
          total ? (100 * seen.busy / total).toFixed(1) : "-"
        } % | ${round(percentile(seen.latencies, 0.5))} | ${
          round(percentile(seen.latencies, 0.99))
        } |`,
      );
      console.error(rows.at(-1));
    }
    core.staff(CAPACITY);
    Deno.kill(pid, "SIGTERM");
    await Deno.remove(policy);
  }
} finally {
  stopAll();
  await core.close();
}

console.log(
  `Core: ${CAPACITY} workers x ${SERVICE_MS} ms (at most ${
    CAPACITY * 1000 / SERVICE_MS
  } req/s), queueing beyond; ${STEP_MS / 1000} s per step; queues: ${
    stringify(QUEUE).trim().replaceAll("\n", ", ")
  }\n`,
);
console.log(
  "| gateway | clients | core p50 ms | core p99 ms | at core (max) | limit (end) | 200/s | 503 share | client p50 ms | client p99 ms |",
);
console.log("| --- | --: | --: | --: | --: | --: | --: | --: | --: | --: |");
for (const row of rows) console.log(row);
