/**
 * Starts the real gateway for tests: a policy (the default file, or the test's, as an object of
 * `tests/support/policies.ts` or as YAML), in front of a given upstream or of a fresh sandbox bank
 * served over HTTP. {@link startGateway} listens on 127.0.0.1; {@link gatewayApp} answers through
 * the app's `fetch` without a listener, for tests whose subject is not the network.
 */
import { PIPELINE } from "../../middleware/mod.ts";
import { parsePolicy } from "../../src/policy/load.ts";
import { loadX509For } from "../../src/pki/x509.ts";
import { createApp } from "../../src/http/app.ts";
import type { Services } from "../../src/core/services.ts";
import { defaultServices } from "../../src/policy/services.ts";
import { memoryLogger } from "../../src/lib/log.ts";
import { createStore } from "../../src/store/mod.ts";
import { type Store } from "../../src/store/types.ts";
import { createUpstream } from "../../src/upstream/mod.ts";
import { type PolicyInput, policyText } from "./policies.ts";

/** The default policy file's text. */
export const DEFAULT_POLICY = Deno.readTextFileSync(
  new URL("../../config/policy.yaml", import.meta.url),
);

/** Options of {@link startGateway}. */
export interface GatewayOptions {
  /** The policy, an object or YAML (default: config/policy.yaml). */
  policy?: PolicyInput | string;
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

/** Starts a gateway listening on 127.0.0.1 (and a sandbox bank unless `upstream` is given). */
export function startGateway(options: GatewayOptions = {}): Promise<TestGateway> {
  return gateway(options, true);
}

/**
 * A gateway answered in-process through the app's `fetch`, as a request from 127.0.0.1 (and a
 * sandbox bank unless `upstream` is given; the upstream is still reached over HTTP). Its `url`
 * starts a listener on first use, for the tests that need one.
 */
export function gatewayApp(options: GatewayOptions = {}): Promise<TestGateway> {
  return gateway(options, false);
}

/** A peer on 127.0.0.1, as the listener would see it. */
function loopbackPeer(): Deno.ServeHandlerInfo<Deno.NetAddr> {
  return {
    remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 40000 },
    completed: Promise.resolve(),
  };
}

/** The headers Deno's `fetch` adds to a request that does not set them. */
const FETCH_DEFAULTS = {
  accept: "*/*",
  "accept-encoding": "gzip,br",
  "accept-language": "*",
  "user-agent": `Deno/${Deno.version.deno}`,
};

/**
 * The request as the listener would see it from Deno's `fetch`: its default headers, `host`, and
 * `content-length` of a body that is text or bytes, or of none on POST, PUT and PATCH; any other
 * body is chunked (without either header, HTTP/1.1 says there is no body).
 */
function wireRequest(url: URL, init: RequestInit | undefined): Request {
  const request = new Request(url, init);
  const headers = request.headers;
  for (const [name, value] of Object.entries(FETCH_DEFAULTS)) {
    if (!headers.has(name)) headers.set(name, value);
  }
  if (!headers.has("host")) headers.set("host", url.host);
  const body = init?.body;
  if (!headers.has("content-length")) {
    if (typeof body === "string") {
      headers.set("content-length", String(new TextEncoder().encode(body).byteLength));
    } else if (body instanceof Uint8Array || body instanceof ArrayBuffer) {
      headers.set("content-length", String(body.byteLength));
    } else if (body == null && ["POST", "PUT", "PATCH"].includes(request.method)) {
      headers.set("content-length", "0");
    } else if (body != null && !headers.has("transfer-encoding")) {
      headers.set("transfer-encoding", "chunked");
    }
  }
  return request;
}

/** The response as the client would see it from the listener, which adds a `Date`. */
function wireResponse(response: Response): Response {
  if (response.headers.has("date")) return response;
  const headers = new Headers(response.headers);
  headers.set("date", new Date().toUTCString());
  return new Response(response.body, {
    status: response.status,
    statusText: response.statusText,
    headers,
  });
}

async function gateway(options: GatewayOptions, listen: boolean): Promise<TestGateway> {
  // Loaded only when needed, so that proxy tests do not depend on the sandbox bank.
  const sandbox = options.upstream
    ? undefined
    : (await import("../../src/sandbox/serve.ts")).serveSandbox(0);
  const upstream = options.upstream ?? sandbox!.url;
  const env = { UPSTREAM_URL: upstream, ...options.env };
  const policyYamlText = policyText(options.policy ?? DEFAULT_POLICY);
  await loadX509For(policyYamlText);
  const policy = parsePolicy("test-policy.yaml", policyYamlText, {
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
  let server: Deno.HttpServer<Deno.NetAddr> | undefined;
  const listening = () => {
    server ??= Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
    return `http://127.0.0.1:${server.addr.port}`;
  };
  if (listen) listening();
  const close = async () => {
    await server?.shutdown();
    ownUpstream?.close();
    await sandbox?.server.shutdown();
    await ownStore?.close();
  };
  return {
    get url() {
      return listening();
    },
    log,
    store,
    close,
    [Symbol.asyncDispose]: close,
    fetch: listen
      ? (path, init) => fetch(new URL(path, listening()), init)
      : async (path, init) =>
        wireResponse(
          await app.fetch(
            wireRequest(new URL(path, server ? listening() : "http://127.0.0.1"), init),
            loopbackPeer(),
          ),
        ),
  };
}
