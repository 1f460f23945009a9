/**
 * The running gateway: serves the app built from a policy file, swaps in a new policy atomically
 * on reload (a bad file is refused and the old policy keeps serving; requests in flight finish
 * under the policy they started with), serves /metrics on its own port when the policy says so,
 * and shuts down gracefully within a bound.
 *
 * Every load of the policy file (at start, on SIGHUP, on a change) writes one audit line with the
 * file's SHA-256 and the outcome. The watch (`policy_watch.ts`) survives atomic saves and
 * Kubernetes ConfigMap updates; a change is a change of the file's content. The listeners come back
 * after failing to accept (`listener.ts`).
 */
import { createApp } from "./app.ts";
import { metricsResponse } from "./endpoints.ts";
import { serveResiliently } from "./listener.ts";
import { watchPolicy } from "./policy_watch.ts";
import { readPolicyFiles } from "../lib/policy_files.ts";
import { loadX509For } from "../pki/x509.ts";
import type { Pipeline } from "../core/chain.ts";
import { parsePolicy, type Policy, PolicyError } from "../policy/load.ts";
import { type Services, withPolicyClients } from "../core/services.ts";
import type { StoreSection } from "../policy/sections.ts";

/** Options of {@link serveGateway}. */
export interface ServeOptions {
  file: string;
  /** The checks and the terminal handler the policy is resolved with. */
  pipeline: Pipeline;
  hostname: string;
  port: number;
  services: Services;
  /** Reload when the policy file changes (where the platform allows watching). */
  watch?: boolean;
}

/** A running gateway. */
export interface GatewayServer {
  /** The address the gateway listens on. */
  addr: Deno.NetAddr;
  /** The metrics listener's address, when there is one. */
  metricsAddr?: Deno.NetAddr;
  /** Loads the policy file again; true when the new policy now serves. */
  reload(): Promise<boolean>;
  /** Stops accepting, lets requests in flight finish for up to `graceMs`, then stops. */
  shutdown(graceMs?: number): Promise<void>;
}

/** Whether this process runs on Deno Deploy. */
export function onDenoDeploy(): boolean {
  try {
    return Boolean(Deno.env.get("DENO_DEPLOYMENT_ID"));
  } catch {
    return false;
  }
}

/**
 * Why the policy's store cannot serve here: a memory store where there are several instances
 * (`workers` of `deno serve --parallel`, the isolates of Deno Deploy) holds the X-Request-IDs and
 * counts of one instance only, unless the policy accepts that (`store.allow_per_instance`).
 */
export function perInstanceProblem(
  store: StoreSection,
  where: { workers: number; deploy: boolean },
): string | undefined {
  if (store.kind !== "memory" || store.allow_per_instance) return undefined;
  const many = where.deploy
    ? "on Deno Deploy (every isolate would have its own)"
    : where.workers > 1
    ? `with ${where.workers} workers (each would have its own)`
    : undefined;
  if (!many) return undefined;
  return `store.kind: a memory store cannot hold X-Request-ID uniqueness and limits ${many}; use redis or upstash, or set store.allow_per_instance: true`;
}

/**
 * The policy file's text as read now, and its SHA-256 in hex; the files it names are read ahead
 * (`readPolicyFiles`), so that parsing it reads none synchronously.
 */
async function readPolicyFile(file: string): Promise<{ text: string; sha256: string }> {
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = await Deno.readFile(file);
  } catch (error) {
    throw new PolicyError(file, [`cannot read the file: ${(error as Error).message}`]);
  }
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  const text = new TextDecoder().decode(bytes);
  await Promise.all([readPolicyFiles(text), loadX509For(text)]);
  return { text, sha256: digest.toHex() };
}

/** Reads and parses a policy file (and the files it names); throws {@link PolicyError}. */
export async function loadPolicyFile(
  file: string,
  pipeline: Pipeline,
): Promise<{ policy: Policy; sha256: string }> {
  const { text, sha256 } = await readPolicyFile(file);
  return { policy: parsePolicy(file, text, pipeline), sha256 };
}

/** How a load of the policy file came about (in its audit line). */
type Trigger = "start" | "reload";

/** Starts the gateway; throws {@link PolicyError} when the policy file is invalid. */
export async function serveGateway(options: ServeOptions): Promise<GatewayServer> {
  const { file, pipeline } = options;
  const first = await readPolicyFile(file);
  const policy = parsePolicy(file, first.text, pipeline);
  const problem = perInstanceProblem(policy.store, { workers: 1, deploy: onDenoDeploy() });
  if (problem) throw new PolicyError(file, [problem]);
  const services = await withPolicyClients(policy, options.services);
  /** The SHA-256 of the last content loaded or refused: the watch reloads when it changes. */
  let seen = first.sha256;
  services.log.info(audit("applied", "start", file, first.sha256));
  const { store, upstream } = services;
  services.metrics.storeEntries.track(() => store.size);
  let app = createApp({ policy, services });
  const server = serveResiliently(
    { hostname: options.hostname, port: options.port, name: "gateway" },
    (request, info) => app.fetch(request, info),
    services.log,
  );

  const metricsServer = policy.metrics.port
    ? serveResiliently(
      { hostname: options.hostname, port: policy.metrics.port, name: "metrics" },
      (request) =>
        new URL(request.url).pathname === "/metrics"
          ? metricsResponse(services)
          : new Response("Not found", { status: 404 }),
      services.log,
    )
    : undefined;

  let reloading = Promise.resolve(true);
  async function reloadOnce(): Promise<boolean> {
    let sha256: string | undefined;
    try {
      const read = await readPolicyFile(file);
      sha256 = seen = read.sha256;
      const next: Policy = parsePolicy(file, read.text, pipeline);
      app = createApp({ policy: next, services });
      services.metrics.reloads.inc({ outcome: "applied" });
      services.log.info(audit("applied", "reload", file, sha256));
      return true;
    } catch (error) {
      services.metrics.reloads.inc({ outcome: "refused" });
      services.log.error({
        ...audit("refused", "reload", file, sha256),
        problems: error instanceof PolicyError ? error.problems : [String(error)],
      });
      return false;
    }
  }
  const reload = () => reloading = reloading.then(reloadOnce, reloadOnce);
  /** A reload when the file's content differs from the last one loaded or refused. */
  async function changed() {
    const sha256 = await readPolicyFile(file).then((read) => read.sha256, () => undefined);
    if (sha256 !== seen) await reload();
  }

  const watcher = options.watch ? await watchPolicy(file, changed) : undefined;

  return {
    addr: server.addr,
    metricsAddr: metricsServer?.addr,
    reload,
    async shutdown(graceMs = 10_000) {
      watcher?.close();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const grace = new Promise<void>((resolve) => timer = setTimeout(resolve, graceMs));
      await Promise.race([server.shutdown(), grace]);
      clearTimeout(timer);
      await metricsServer?.shutdown();
      upstream.close();
      await store.close();
    },
  };
}

/** The audit line of one load of the policy file. */
function audit(outcome: "applied" | "refused", trigger: Trigger, file: string, sha256?: string) {
  return {
    msg: outcome === "applied"
      ? (trigger === "start" ? "policy loaded" : "policy reloaded")
      : "policy reload refused; the previous policy keeps serving",
    audit: "policy",
    outcome,
    trigger,
    file,
    sha256: sha256 ?? null,
  };
}
