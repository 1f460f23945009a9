/**
 * The running gateway of main.ts: serves the policy file's app, kept live (`live_policy.ts`:
 * reloads, their audit lines, the watch), serves /metrics on its own port when the policy says
 * so, and shuts down gracefully within a bound. The listeners come back after failing to accept
 * (`listener.ts`).
 */
import { metricsPortHandler } from "./endpoints.ts";
import { type ResilientServer, serveResiliently } from "./listener.ts";
import { loadPolicyFile, openPolicy } from "./live_policy.ts";
import type { Pipeline } from "../core/chain.ts";
import { PolicyError } from "../policy/load.ts";
import type { Services } from "../core/services.ts";
import type { StoreSection } from "../sections/sections.ts";

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
  const durable = where.deploy
    ? "kv, redis or upstash"
    : "sqlite (the workers share its file), redis or upstash";
  return `store.kind: a memory store cannot hold X-Request-ID uniqueness and limits ${many}; use ${durable}, or set store.allow_per_instance: true`;
}

/**
 * Starts the gateway; throws {@link PolicyError} when the policy cannot serve, and
 * {@link ListenError} when a port cannot be opened.
 */
export async function serveGateway(options: ServeOptions): Promise<GatewayServer> {
  const { file, pipeline } = options;
  const loaded = await loadPolicyFile(file, pipeline);
  const problem = perInstanceProblem(loaded.policy.store, { workers: 1, deploy: onDenoDeploy() });
  if (problem) throw new PolicyError(file, [problem]);
  const live = await openPolicy({
    file,
    pipeline,
    loaded,
    services: options.services,
    watch: options.watch,
  });
  const { services } = live;
  let server: ResilientServer | undefined;
  let metricsServer: ResilientServer | undefined;
  try {
    server = serveResiliently(
      { hostname: options.hostname, port: options.port, name: "gateway" },
      live.fetch,
      services.log,
    );
    const port = loaded.policy.metrics.port;
    metricsServer = port
      ? serveResiliently(
        { hostname: options.hostname, port, name: "metrics" },
        metricsPortHandler(loaded.policy.metrics.token, services),
        services.log,
      )
      : undefined;
  } catch (error) {
    await server?.shutdown();
    await live.close();
    throw error;
  }
  const gateway = server;
  live.serving();

  return {
    addr: gateway.addr,
    metricsAddr: metricsServer?.addr,
    reload: live.reload,
    async shutdown(graceMs = 10_000) {
      live.unwatch();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const grace = new Promise<void>((resolve) => timer = setTimeout(resolve, graceMs));
      await Promise.race([gateway.shutdown(), grace]);
      clearTimeout(timer);
      await metricsServer?.shutdown();
      await live.close();
    },
  };
}
