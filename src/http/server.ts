/**
 * The running gateway: serves the app built from a policy file, swaps in a new policy atomically
 * on reload (a bad file is refused and the old policy keeps serving; requests in flight finish
 * under the policy they started with), serves /metrics on its own port when the policy says so,
 * and shuts down gracefully within a bound.
 */
import { createApp } from "./app.ts";
import { metricsResponse } from "./endpoints.ts";
import type { Pipeline } from "../core/chain.ts";
import { loadPolicy, PolicyError } from "../policy/load.ts";
import { type Services, withPolicyClients } from "../core/services.ts";

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

/** Starts the gateway; throws {@link PolicyError} when the policy file is invalid. */
export async function serveGateway(options: ServeOptions): Promise<GatewayServer> {
  const { file, pipeline } = options;
  const policy = await loadPolicy(file, pipeline);
  const services = await withPolicyClients(policy, options.services);
  const { store, upstream } = services;
  services.metrics.storeEntries.track(() => store.size);
  let app = createApp({ policy, services });
  const server = Deno.serve({
    hostname: options.hostname,
    port: options.port,
    onListen: () => {},
  }, (request, info) => app.fetch(request, info));

  const metricsServer = policy.metrics.port
    ? Deno.serve(
      { hostname: options.hostname, port: policy.metrics.port, onListen: () => {} },
      (request) =>
        new URL(request.url).pathname === "/metrics"
          ? metricsResponse(services)
          : new Response("Not found", { status: 404 }),
    )
    : undefined;

  let reloading = Promise.resolve(true);
  async function reloadOnce(): Promise<boolean> {
    try {
      app = createApp({ policy: await loadPolicy(file, pipeline), services });
      services.metrics.reloads.inc({ outcome: "applied" });
      services.log.info({ level: "info", msg: "policy reloaded", file });
      return true;
    } catch (error) {
      services.metrics.reloads.inc({ outcome: "refused" });
      services.log.error({
        msg: "policy reload refused; the previous policy keeps serving",
        file,
        problems: error instanceof PolicyError ? error.problems : [String(error)],
      });
      return false;
    }
  }
  const reload = () => reloading = reloading.then(reloadOnce, reloadOnce);

  const watcher = options.watch ? watchFile(file, reload) : undefined;

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

/** Calls `onChange` (debounced) when the file changes; undefined where watching is not allowed. */
function watchFile(file: string, onChange: () => void): Deno.FsWatcher | undefined {
  let watcher: Deno.FsWatcher;
  try {
    watcher = Deno.watchFs(file);
  } catch {
    return undefined;
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  (async () => {
    for await (const event of watcher) {
      if (event.kind === "access") continue;
      clearTimeout(timer);
      timer = setTimeout(onChange, 200);
    }
  })().catch(() => {});
  return watcher;
}
