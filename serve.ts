/**
 * The entry point for `deno serve` (and Deno Deploy): the same gateway as main.ts, exported as a
 * `fetch` handler, without file watching or signals. The policy file comes from GATEWAY_POLICY (a
 * file of the repository or image), secrets and addresses from the environment.
 *
 *   deno task serve        # deno serve --parallel on HOST:PORT (127.0.0.1:8080 by default)
 *
 * `--parallel` runs one gateway per core, each a worker thread of one process. State that must be
 * exact across them (idempotency, rate limits, consent frequency) must live in Redis: a memory
 * store is refused when there are several workers, and on Deno Deploy, unless the policy says
 * `store.allow_per_instance: true`. /metrics answers the sum over every worker, whichever worker
 * the scrape reaches; `metrics.port` is served by one worker for all of them (not on Deno Deploy,
 * which serves one port).
 */
import { PIPELINE } from "./middleware/mod.ts";
import { createApp } from "./src/http/app.ts";
import { localSnapshot, metricsResponse } from "./src/http/endpoints.ts";
import { loadPolicyFile, onDenoDeploy, perInstanceProblem } from "./src/http/server.ts";
import { joinWorkers } from "./src/http/workers.ts";
import { type Policy, PolicyError } from "./src/policy/load.ts";
import { defaultServices, type Services, withPolicyClients } from "./src/core/services.ts";
import { jsonLogger } from "./src/lib/log.ts";
import { gatewayEnv, readEnv } from "./src/policy/env.ts";

/** How long the workers of a process take to greet each other at start-up, at most. */
const SETTLE_MS = 300;

const log = jsonLogger();
const deploy = onDenoDeploy();
const file = readEnv(gatewayEnv.pick({ GATEWAY_POLICY: true })).GATEWAY_POLICY;
/** The gateway's services, once made (the other workers may ask for metrics before). */
const made: { services?: Services } = {};
let policy: Policy | undefined;

/** Logs why the gateway cannot start, as JSON, and ends the process. */
function refuse(problems: string[]): never {
  log.error({ msg: "the gateway cannot start", file, problems });
  Deno.exit(1);
}

/** Refuses a memory store per worker, at start-up or as soon as another worker is heard from. */
function checkInstances(workers: number) {
  const problem = policy && perInstanceProblem(policy.store, { workers, deploy });
  if (problem) refuse([problem]);
}

// Joined first, so that the other workers' greetings arrive while the policy loads; a worker that
// starts later greets this one, and whichever of the two hears of the other first refuses.
const joined = performance.now();
const workers = deploy ? undefined : joinWorkers(
  () => made.services ? localSnapshot(made.services) : [],
  { onPeer: checkInstances },
);

try {
  policy = (await loadPolicyFile(file, PIPELINE)).policy;
} catch (error) {
  if (!(error instanceof PolicyError)) throw error;
  refuse(error.problems);
}
if (policy.store.kind === "memory" && !policy.store.allow_per_instance && workers) {
  // The workers of a process start together: a moment for their greetings (and replies) to pass.
  const left = Math.max(SETTLE_MS - (performance.now() - joined), 50);
  await new Promise((resolve) => setTimeout(resolve, left));
}
checkInstances(workers?.count() ?? 1);

// The store and the upstream client the policy names: under --parallel, exact shared state needs
// the policy's Redis, never a memory store per worker.
const services = made.services = await withPolicyClients(policy, defaultServices({ log }));
if (workers) services.metrics.workers = () => workers.collect();
const app = createApp({ policy, services });

if (policy.metrics.port) {
  if (deploy) {
    log.error({ msg: "metrics.port is ignored on Deno Deploy (one port): set metrics.token" });
  } else {
    try {
      // The first worker to bind the port serves it for every worker; it stays out of the way of
      // a shutdown (deno serve stops its own server on SIGTERM, not this one).
      Deno.serve(
        {
          hostname: Deno.env.get("HOST") ?? "127.0.0.1",
          port: policy.metrics.port,
          onListen: () => {},
        },
        (request) =>
          new URL(request.url).pathname === "/metrics"
            ? metricsResponse(services)
            : new Response("Not found", { status: 404 }),
      ).unref();
    } catch (error) {
      if (!(error instanceof Deno.errors.AddrInUse)) throw error;
      log.info({
        msg: "metrics port served by another worker or process",
        port: policy.metrics.port,
      });
    }
  }
}

export default {
  fetch: app.fetch,
  // Instead of deno's own "Listening on" line: every line the gateway writes is JSON.
  onListen(addr) {
    const where = "hostname" in addr ? `http://${addr.hostname}:${addr.port}` : addr.transport;
    log.info({ msg: `xs2a-edge on ${where} (policy ${file})` });
  },
} satisfies Deno.ServeDefaultExport;
