/**
 * Starts the real gateway on 127.0.0.1 for tests: a policy (the default file, or YAML of the
 * test's), in front of a given upstream or of a fresh sandbox bank served over HTTP.
 */
import { PIPELINE } from "../../middleware/mod.ts";
import { parsePolicy } from "../../src/policy/load.ts";
import { loadX509For } from "../../src/pki/x509.ts";
import { createApp } from "../../src/http/app.ts";
import { defaultServices, type Services } from "../../src/core/services.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import { createStore } from "../../src/store/mod.ts";
import { type Store } from "../../src/store/types.ts";
import { createUpstream } from "../../src/upstream/mod.ts";

/** The default policy file's text. */
export const DEFAULT_POLICY = Deno.readTextFileSync(
  new URL("../../config/policy.yaml", import.meta.url),
);

/** Options of {@link startGateway}. */
export interface GatewayOptions {
  /** Policy YAML (default: config/policy.yaml). */
  policy?: string;
  /** Upstream base URL (default: a new sandbox bank). */
  upstream?: string;
  /** Environment for `${NAME}` references, over the process environment. */
  env?: Record<string, string>;
  /** Services to replace (a store given here is not closed with the gateway). */
  services?: Partial<Services>;
}

/** A running gateway. */
export interface TestGateway extends AsyncDisposable {
  url: string;
  log: ReturnType<typeof memoryLogger>;
  /** The gateway's store (from the policy's `store` section unless the test passed one). */
  store: Store;
  close(): Promise<void>;
  /** fetch against the gateway; a path is resolved against its URL. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
}

/** Starts a gateway (and a sandbox bank unless `upstream` is given). */
export async function startGateway(options: GatewayOptions = {}): Promise<TestGateway> {
  // Loaded only when needed, so that proxy tests do not depend on the sandbox bank.
  const sandbox = options.upstream
    ? undefined
    : (await import("../../src/sandbox/serve.ts")).serveSandbox(0);
  const upstream = options.upstream ?? sandbox!.url;
  const env = { UPSTREAM_URL: upstream, ...options.env };
  await loadX509For(options.policy ?? DEFAULT_POLICY);
  const policy = parsePolicy("test-policy.yaml", options.policy ?? DEFAULT_POLICY, {
    ...PIPELINE,
    env: (name) => env[name as keyof typeof env] ?? Deno.env.get(name),
  });
  const log = memoryLogger();
  const ownStore = options.services?.store ? undefined : await createStore(policy.store, { log });
  const store = options.services?.store ?? ownStore!;
  // The upstream client the policy names, unless the test passed one (or a fetch to use).
  const ownUpstream = (options.services?.upstream ?? options.services?.fetch)
    ? undefined
    : createUpstream(policy.upstream);
  const app = createApp({
    policy,
    services: defaultServices({
      log,
      ...options.services,
      store,
      upstream: options.services?.upstream ?? ownUpstream,
    }),
  });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
  const url = `http://127.0.0.1:${server.addr.port}`;
  const close = async () => {
    await server.shutdown();
    ownUpstream?.close();
    await sandbox?.server.shutdown();
    await ownStore?.close();
  };
  return {
    url,
    log,
    store,
    close,
    [Symbol.asyncDispose]: close,
    fetch: (path, init) => fetch(new URL(path, url), init),
  };
}
