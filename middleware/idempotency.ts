/**
 * `idempotency`: X-Request-ID as an idempotency key, shared by every gateway instance through the
 * store. For writes (POST, PUT, DELETE) the same id from the same TPP with the same request
 * (method, path, SHA-256 of the body) gets the first answer again, marked `X-Idempotent-Replay:
 * true`, without reaching the upstream; the same id with another request is 400 FORMAT_ERROR; a
 * repeat while the first is still in flight waits for it (bounded), else 409 STATUS_INVALID.
 * Reads may require plain uniqueness instead. Only upstream answers are kept, never the
 * gateway's own rejections.
 */
import { z } from "zod";
import { errorText } from "../src/lib/mask.ts";
import { defineCheck, type GatewayContext, modal } from "../src/core/check.ts";
import { pairs } from "../src/lib/header_pairs.ts";
import { formatError, GatewayError } from "../src/core/errors.ts";
import {
  callerId,
  decide,
  decideAgain,
  duration,
  failField,
  keyPart,
  storeUnavailable,
} from "./_shared_state.ts";
import type { IdempotencyPart, StoredResponse } from "../src/store/types.ts";
import type { Services } from "../src/core/services.ts";

const KEY = "idempotency";

/** Response headers never kept for a replay (they belong to one exchange). */
const NOT_KEPT = new Set([
  "date",
  "x-request-id",
  "set-cookie",
  "content-length",
  "retry-after",
  "ratelimit-limit",
  "ratelimit-remaining",
  "ratelimit-reset",
  "x-idempotent-replay",
]);

/** Upstream answers that say "try again later": not kept, the id is released. */
const TRANSIENT = new Set([408, 425, 429]);

/** The header that marks a replayed answer. */
export const REPLAY_HEADER = "x-idempotent-replay";

async function fingerprint(c: GatewayContext): Promise<string> {
  const url = c.req.url;
  const query = url.indexOf("?");
  const head = new TextEncoder().encode(
    `${c.req.method} ${c.req.path}${query < 0 ? "" : url.slice(query)}\n`,
  );
  const bytes = new Uint8Array(head.byteLength + c.get("body").byteLength);
  bytes.set(head);
  bytes.set(c.get("body"), head.byteLength);
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)).toBase64();
}

function replay(stored: StoredResponse): Response {
  const headers = new Headers(stored.headers);
  headers.set(REPLAY_HEADER, "true");
  const empty = stored.status === 204 || stored.status === 304 || stored.body === "";
  return new Response(empty ? null : Uint8Array.fromBase64(stored.body), {
    status: stored.status,
    headers,
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export const idempotency = defineCheck({
  key: KEY,
  description: "X-Request-ID uniqueness, with replay of the first answer for repeated writes",
  options: modal({
    fail: failField("closed"),
    writes: z.enum(["replay", "unique", "none"]).default("replay").describe(
      "POST, PUT, DELETE: replay the first answer to the same request; unique: reject any reuse; none: no check",
    ),
    reads: z.enum(["unique", "none"]).default("none").describe(
      "GET: unique: reject a reused X-Request-ID; none: no check",
    ),
    retention: duration().prefault("24h").describe(
      "How long an X-Request-ID and its answer are kept, for example 24h",
    ),
    max_body_bytes: z.number().int().positive().default(65_536).describe(
      "Largest answer body kept for replay; a repeat of a request with a larger answer gets 409 STATUS_INVALID",
    ),
    wait: duration().prefault("5s").describe(
      "How long a repeat waits for the first request still in flight, before 409 STATUS_INVALID",
    ),
    poll: duration().prefault("50ms").describe("How often a waiting repeat looks at the store"),
    inflight: duration().prefault("60s").describe(
      "How long a request may stay in flight; longer than the proxy's timeout. A request still marked in flight after that (its instance died, or the store was down when the bank answered) has an unknown outcome: repeats get 409 STATUS_INVALID for the retention time, never a second execution",
    ),
  }),
  validate(options) {
    const problems: string[] = [];
    if (options.poll > options.wait) problems.push("poll must not be longer than wait");
    if (options.inflight < options.wait) problems.push("inflight must not be shorter than wait");
    if (options.retention < options.inflight) {
      problems.push("retention must not be shorter than inflight");
    }
    return problems;
  },
  create(options, context) {
    const { operation, services } = context;
    const kind = operation.method === "GET" ? options.reads : options.writes;
    if (kind === "none") return undefined;
    const plan = context.decisions;
    const enforce = options.mode === "enforce";
    const fail = { check: KEY, fail: options.fail };
    plan.idempotency = async (c): Promise<IdempotencyPart | undefined> => {
      const id = c.get("requestId");
      if (!id) return undefined;
      return {
        key: `idem:${keyPart(callerId(c))}:${keyPart(id)}`,
        mode: kind,
        fingerprint: await fingerprint(c),
        token: crypto.randomUUID(),
        enforce,
        inflightMs: options.inflight,
        retentionMs: options.retention,
      };
    };

    return async (c, next) => {
      let outcome = await decide(c, plan, services);
      const deadline = performance.now() + options.wait;
      while (outcome.verdict?.idempotency?.outcome === "inflight" && performance.now() < deadline) {
        await sleep(Math.min(options.poll, deadline - performance.now()));
        outcome = await decideAgain(c, services);
      }
      if (outcome.error) {
        storeUnavailable(c, services, fail);
        return next();
      }
      const found = outcome.verdict.idempotency;
      const id = c.get("requestId");
      switch (found?.outcome) {
        case undefined:
        case "free":
          // No X-Request-ID, or another check rejects the request: nothing was claimed.
          return next();
        case "replay":
          services.metrics.replays.inc();
          return replay(found.response!);
        case "mismatch":
          throw formatError(
            "X-Request-ID",
            `X-Request-ID "${id}" was already used for another request; send a new one`,
          );
        case "duplicate":
          throw formatError(
            "X-Request-ID",
            `X-Request-ID "${id}" was already used; every request needs a new one`,
          );
        case "inflight":
          throw new GatewayError(
            409,
            "STATUS_INVALID",
            `A request with X-Request-ID "${id}" is still being processed; retry it later`,
            { path: "X-Request-ID", headers: { "retry-after": "1" } },
          );
        case "unknown":
          throw new GatewayError(
            409,
            "STATUS_INVALID",
            `The request with X-Request-ID "${id}" was not seen to finish; it may have been executed. Read the resource's status, and send a new X-Request-ID if it has to be repeated`,
            { path: "X-Request-ID" },
          );
        case "gone":
          throw new GatewayError(
            409,
            "STATUS_INVALID",
            `The request with X-Request-ID "${id}" was processed but its answer is too large to repeat; read the resource instead`,
            { path: "X-Request-ID" },
          );
      }
      if (kind === "unique") return next();
      const part = outcome.decision.idempotency!;
      try {
        await next();
      } catch (error) {
        await finish(c, services, part, "release");
        throw error;
      }
      await keep(c, services, part);
    };

    /** After the upstream answered: keep its answer, or release the id when there is none. */
    async function keep(c: GatewayContext, services: Services, part: IdempotencyPart) {
      const status = c.res.status;
      // An answer the bank gave, or the gateway's "outcome unknown" for a write that may have
      // reached it, is kept; anything else (the bank unreachable, or saying "try again") frees the
      // id for a retry.
      const unknown = c.get("outcomeUnknown") === true;
      if (!unknown && (!c.get("upstream") || status >= 500 || TRANSIENT.has(status))) {
        services.log.info({
          msg: "idempotency key released",
          op: operation.id,
          request_id: c.get("requestId"),
          status,
          upstream_status: c.get("upstream")?.status,
        });
        return await finish(c, services, part, "release");
      }
      const body = new Uint8Array(await c.res.clone().arrayBuffer());
      const headers = pairs(c.res.headers).filter(([name]) => !NOT_KEPT.has(name));
      if (body.byteLength > options.max_body_bytes) {
        return await finish(c, services, part, "gone");
      }
      await finish(c, services, part, "done", { status, headers, body: body.toBase64() });
    }
  },
});

async function finish(
  c: GatewayContext,
  services: Services,
  part: IdempotencyPart,
  action: "done" | "gone" | "release",
  response?: StoredResponse,
): Promise<void> {
  try {
    await services.store.complete({
      key: part.key,
      token: part.token,
      action,
      response,
      retentionMs: part.retentionMs,
    });
  } catch (error) {
    // The answer is already known: the client gets it; the marker expires after `inflight`.
    services.log.error({
      msg: "idempotency record not updated",
      op: c.get("op").id,
      request_id: c.get("requestId"),
      action,
      error: errorText(error),
    });
  }
}
