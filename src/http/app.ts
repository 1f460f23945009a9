/**
 * The gateway app: routes registered from the catalogue (as the policy resolved it), each with
 * its chain built once; Berlin Group 404/405 for everything else; one error handler; the access
 * log; health endpoints.
 */
import { Hono } from "hono";
import { type GatewayEnv } from "../core/check.ts";
import { requestHeaders } from "../core/request.ts";
import { buildChain, type Chain, type ErrorResponder } from "../core/chain.ts";
import { GatewayError } from "../psd2/errors.ts";
import { failureAnswer, finish } from "../core/answer.ts";
import type { Policy, ResolvedOperation } from "../policy/load.ts";
import type { Services } from "../core/services.ts";
import type { Bytes } from "../lib/body.ts";
import { accessLog, type Answering } from "./access_log.ts";
import { healthEndpoints } from "./endpoints.ts";
import { earliestToday } from "../lib/dates.ts";
import { isIpAddress } from "../lib/ip.ts";
import { type Terminators, terminators } from "../lib/terminators.ts";
import { FirstMatchRouter } from "./router.ts";
import { loadShadow } from "../policy/shadow.ts";

/** What the app is built from. */
export interface AppOptions {
  policy: Policy;
  services: Services;
}

/** `{payment-service}` to Hono's `:payment-service`. */
function honoPath(template: string): string {
  return template.replace(/\{([^}]+)\}/g, ":$1");
}

/** Orders templates so that at each segment a literal wins over a parameter. */
function bySpecificity(a: string, b: string): number {
  const x = a.split("/");
  const y = b.split("/");
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const px = x[i].startsWith("{") ? 1 : 0;
    const py = y[i].startsWith("{") ? 1 : 0;
    if (px !== py) return px - py;
  }
  return y.length - x.length;
}

/**
 * The handler of one operation: sets the per-request variables every check relies on, then runs
 * the operation's chain (its checks and the proxy) and answers what the chain left in `c.res`.
 */
function operationHandler(
  resolved: ResolvedOperation,
  chain: Chain,
  notAllowed: () => GatewayError,
  peers: Terminators,
): Answering {
  const op = resolved.operation;
  const empty: Bytes = new Uint8Array(0);
  return async (c) => {
    // Hono runs GET routes for HEAD; the interface has no HEAD, and a read would be executed.
    if (c.req.raw.method === "HEAD") throw notAllowed();
    const headers = requestHeaders(c);
    c.set("op", op);
    c.set("terminators", peers);
    c.set("params", c.req.param() as Record<string, string>);
    c.set("requestId", headers.get("x-request-id") ?? "");
    c.set("body", empty);
    c.set("psuInitiated", isIpAddress(headers.get("psu-ip-address")));
    return await chain(c);
  };
}

/** The 405 of a path, listing the methods it has. */
function methodNotAllowed(allow: string[]): () => GatewayError {
  const list = allow.join(", ");
  return () =>
    new GatewayError(405, "SERVICE_INVALID", `Method not allowed here; allowed: ${list}`, {
      headers: { allow: list },
    });
}

/** Builds the gateway for a policy. */
export function createApp({ policy, services }: AppOptions): Hono<GatewayEnv> {
  const app = new Hono<GatewayEnv>({ router: new FirstMatchRouter() });
  const respond: ErrorResponder = (error, c) => {
    if (!(error instanceof GatewayError)) {
      services.log.error({
        msg: "unhandled error",
        request_id: c.req.header("x-request-id"),
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
      });
    }
    return failureAnswer(error);
  };
  healthEndpoints(app, policy, services);
  // The contract as this policy serves it, built once per day (its examples carry dates).
  let contract: { day: string; text: string } | undefined;
  app.get("/openapi.json", async (c) => {
    const day = earliestToday(services.now());
    if (contract?.day !== day) {
      // Generated on request only: a gateway that is never asked never loads the generator.
      const { openApiDocument } = await import("./openapi.ts");
      contract = { day, text: JSON.stringify(openApiDocument(policy, day)) };
    }
    return c.body(contract.text, 200, {
      "content-type": "application/json",
      "cache-control": "no-cache",
    });
  });
  const logged = accessLog(services, respond, policy.access_log);
  const peers = terminators(policy.trust.terminators);
  const shadow = loadShadow(policy, services, respond);

  const byPath = Map.groupBy(policy.operations, (r) => r.operation.path);
  for (const path of [...byPath.keys()].sort(bySpecificity)) {
    const resolved = byPath.get(path)!;
    const notAllowed = methodNotAllowed(resolved.map((r) => r.operation.method));
    for (const r of resolved) {
      const context = { operation: r.operation, services, sections: policy };
      const pipeline = { checks: policy.checks, terminal: policy.terminal, options: r.options };
      const chain = buildChain(pipeline, context, respond, shadow?.observer(r.operation));
      app.on(
        r.operation.method,
        honoPath(path),
        logged(operationHandler(r, chain, notAllowed, peers)),
      );
    }
    app.all(
      honoPath(path),
      logged(() => {
        throw notAllowed();
      }),
    );
  }

  app.notFound(logged(() => {
    throw new GatewayError(404, "RESOURCE_UNKNOWN", "No operation of the interface has this path");
  }));
  app.onError((error, c) => finish(c, respond(error, c)));
  return app;
}
