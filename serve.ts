/**
 * The entry point for `deno serve` (and Deno Deploy): the same gateway as main.ts, exported as a
 * `fetch` handler. The policy file comes from GATEWAY_POLICY (a file of the repository or image),
 * secrets and addresses from the environment.
 *
 *   deno task serve        # deno serve --parallel on HOST:PORT (127.0.0.1:8080 by default)
 *
 * `--parallel` runs one gateway per core, each a worker thread of one process. State that must be
 * exact across them (idempotency, rate limits, consent frequency) must live in Redis: a memory
 * store is refused when there are several workers, and on Deno Deploy, unless the policy says
 * `store.allow_per_instance: true`. /metrics answers the sum over every worker, whichever worker
 * the scrape reaches; `metrics.port` is served by one worker for all of them (not on Deno Deploy,
 * which serves one port).
 *
 * Under `deno serve`, every worker reloads the policy on SIGHUP and when the file changes
 * (GATEWAY_WATCH), and writes its own audit line (with its `worker` id); on SIGTERM and SIGINT
 * (which `deno serve` also takes to stop accepting), each lets its requests in flight finish
 * within SHUTDOWN_GRACE_MS, closes its store and upstream connections, so that the process ends,
 * and logs that it stopped. Deno Deploy neither sends signals nor lets a file change: a policy
 * change is a new deployment (docs/deployment.md).
 */
import { PIPELINE } from "./middleware/mod.ts";
import { localSnapshot, metricsPortHandler } from "./src/http/endpoints.ts";
import { onDenoDeploy, perInstanceProblem } from "./src/http/server.ts";
import {
  type LivePolicy,
  type LoadedPolicy,
  loadPolicyFile,
  openPolicy,
} from "./src/http/live_policy.ts";
import { joinWorkers } from "./src/http/workers.ts";
import { PolicyError } from "./src/policy/load.ts";
import type { Services } from "./src/core/services.ts";
import { defaultServices } from "./src/policy/services.ts";
import { jsonLogger } from "./src/lib/log.ts";
import { EnvError, gatewayEnv, readEnv } from "./src/policy/env.ts";

/** How long the workers of a process take to greet each other at start-up, at most. */
const SETTLE_MS = 300;

const log = jsonLogger();
const deploy = onDenoDeploy();
let file = "config/policy.yaml";
/** The gateway's services, once made (the other workers may ask for metrics before). */
const made: { services?: Services } = {};
let loaded: LoadedPolicy | undefined;

/** Logs why the gateway cannot start, as one JSON line (never a stack trace), and ends. */
function refuse(error: unknown): never {
  const problems = error instanceof PolicyError || error instanceof EnvError
    ? error.problems
    : [error instanceof Error ? `${error.name}: ${error.message}` : String(error)];
  log.error({ msg: "the gateway cannot start", file, problems });
  Deno.exit(1);
}

/** Refuses a memory store per worker, at start-up or as soon as another worker is heard from. */
function checkInstances(workers: number) {
  const problem = loaded && perInstanceProblem(loaded.policy.store, { workers, deploy });
  if (problem) refuse(new PolicyError(file, [problem]));
}

const env = (() => {
  try {
    return readEnv(gatewayEnv.pick({
      GATEWAY_POLICY: true,
      GATEWAY_WATCH: true,
      SHUTDOWN_GRACE_MS: true,
    }));
  } catch (error) {
    refuse(error);
  }
})();
file = env.GATEWAY_POLICY;

// SIGHUP is taken from the start: once any worker listens for it, a worker that does not yet would
// miss it (and before any does, it ends the process). One that arrives while the policy loads
// reloads it as soon as it serves.
let live: LivePolicy | undefined;
let hangUp = false;
if (!deploy) Deno.addSignalListener("SIGHUP", () => live ? live.reload() : hangUp = true);

// Joined first, so that the other workers' greetings arrive while the policy loads; a worker that
// starts later greets this one, and whichever of the two hears of the other first refuses.
const joined = performance.now();

const workers = deploy ? undefined : joinWorkers(
  () => made.services ? localSnapshot(made.services) : [],
  { onPeer: checkInstances },
);
/** This worker in its log lines, where there are workers. */
const worker = workers ? { worker: workers.id } : {};

try {
  loaded = await loadPolicyFile(file, PIPELINE);
} catch (error) {
  refuse(error);
}
if (loaded.policy.store.kind === "memory" && !loaded.policy.store.allow_per_instance && workers) {
  // The workers of a process start together: a moment for their greetings (and replies) to pass.
  const left = Math.max(SETTLE_MS - (performance.now() - joined), 50);
  await new Promise((resolve) => setTimeout(resolve, left));
}
checkInstances(workers?.count() ?? 1);

// The store and the upstream client the policy names: under --parallel, exact shared state needs
// the policy's Redis, never a memory store per worker.
try {
  live = await openPolicy({
    file,
    pipeline: PIPELINE,
    loaded,
    services: defaultServices({ log }),
    watch: !deploy && env.GATEWAY_WATCH,
    labels: worker,
  });
} catch (error) {
  refuse(error);
}
/** The policy serving, from here on. */
const serving = live;
if (hangUp) serving.reload();
const services = made.services = serving.services;
if (workers) services.metrics.workers = () => workers.collect();

if (loaded.policy.metrics.port) {
  if (deploy) {
    log.error({ msg: "metrics.port is ignored on Deno Deploy (one port): set metrics.token" });
  } else {
    try {
      // The first worker to bind the port serves it for every worker; it stays out of the way of
      // a shutdown (deno serve stops its own server on SIGTERM, not this one).
      Deno.serve(
        {
          hostname: Deno.env.get("HOST") ?? "127.0.0.1",
          port: loaded.policy.metrics.port,
          onListen: () => {},
        },
        metricsPortHandler(loaded.policy.metrics.token, services),
      ).unref();
    } catch (error) {
      if (!(error instanceof Deno.errors.AddrInUse)) throw error;
      log.info({
        msg: "metrics port served by another worker or process",
        port: loaded.policy.metrics.port,
      });
    }
  }
}

/** Requests being answered by this worker, and who waits for there to be none. */
let inFlight = 0;
let idle: (() => void) | undefined;
let stopping = false;

/**
 * Stops this worker once `deno serve` has stopped accepting (on the same signal): waits for its
 * requests in flight (within SHUTDOWN_GRACE_MS), then closes the watch, the workers' channel, the
 * upstream client and the store, whose connections (a Redis Cluster's above all) would otherwise
 * keep the process alive.
 */
async function stop(signal: Deno.Signal) {
  if (stopping) return;
  stopping = true;
  serving.unwatch();
  let timer: ReturnType<typeof setTimeout> | undefined;
  if (inFlight > 0) {
    await new Promise<void>((resolve) => {
      idle = resolve;
      timer = setTimeout(resolve, env.SHUTDOWN_GRACE_MS);
    });
  }
  clearTimeout(timer);
  workers?.close();
  await serving.close();
  log.info({ msg: `xs2a-edge stopped (${signal})`, ...worker, unfinished: inFlight });
}

if (!deploy) {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    Deno.addSignalListener(signal, () => stop(signal));
  }
}

// deno serve calls onListen in one worker only: each says here that it serves (its signals taken).
serving.serving();
log.info({ msg: "worker ready", ...worker });

export default {
  async fetch(request, info) {
    inFlight++;
    try {
      return await serving.fetch(request, info);
    } finally {
      if (--inFlight === 0) idle?.();
    }
  },
  // Instead of deno's own "Listening on" line: every line the gateway writes is JSON.
  onListen(addr) {
    const where = "hostname" in addr ? `http://${addr.hostname}:${addr.port}` : addr.transport;
    log.info({ msg: `xs2a-edge on ${where} (policy ${file})`, ...worker });
  },
} satisfies Deno.ServeDefaultExport;
