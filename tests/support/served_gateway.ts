/**
 * The gateway as main.ts serves it (serveGateway(): a policy file, reloads, the watch, the metrics
 * port), on a free port of 127.0.0.1, for the tests of serving rather than of one check.
 */
import { PIPELINE } from "../../middleware/mod.ts";
import { type GatewayServer, serveGateway } from "../../src/http/server.ts";
import type { Services } from "../../src/core/services.ts";
import { defaultServices } from "../../src/policy/services.ts";
import { memoryLogger } from "../../src/lib/log.ts";

/** A served gateway; disposing of it shuts it down and removes the policy file it wrote. */
export interface ServedGateway extends AsyncDisposable {
  server: GatewayServer;
  services: Services;
  /** The policy file it serves. */
  file: string;
  /** `http://127.0.0.1:<port>` */
  url: string;
}

/** Options of {@link serveTestGateway}: a policy's text (written to a file of its own) or a file. */
export type ServedOptions = ({ policy: string } | { file: string }) & {
  /** Default: the default services with a memory logger. */
  services?: Services;
  watch?: boolean;
};

/** Serves the policy; shutting down twice (a test's own, then the disposal) is harmless. */
export async function serveTestGateway(options: ServedOptions): Promise<ServedGateway> {
  const file = "file" in options ? options.file : await Deno.makeTempFile({ suffix: ".yaml" });
  if ("policy" in options) await Deno.writeTextFile(file, options.policy);
  const services = options.services ?? defaultServices({ log: memoryLogger() });
  const removeOwnFile = () => "policy" in options ? Deno.remove(file).catch(() => {}) : undefined;
  const started = await serveGateway({
    file,
    pipeline: PIPELINE,
    hostname: "127.0.0.1",
    port: 0,
    services,
    watch: options.watch,
  }).catch(async (error) => {
    await removeOwnFile();
    throw error;
  });
  let stopping: Promise<void> | undefined;
  const server = {
    ...started,
    shutdown: (graceMs?: number) => stopping ??= started.shutdown(graceMs),
  };
  return {
    server,
    services,
    file,
    url: `http://127.0.0.1:${started.addr.port}`,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
      // A test may have removed it already (a reload of a file gone).
      await removeOwnFile();
    },
  };
}
