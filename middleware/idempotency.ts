/**
 * `idempotency`: X-Request-ID as an idempotency key, shared by every gateway instance through the
 * store. For writes (POST, PUT, DELETE) the same id from the same TPP with the same request
 * (method, path, SHA-256 of the body) gets the first answer again, marked `X-Idempotent-Replay:
 * true`, without reaching the upstream; the same id with another request is 400 FORMAT_ERROR; a
 * repeat while the first is still in flight waits for it (bounded), else 409 STATUS_INVALID.
 * Reads may require plain uniqueness instead. Only upstream answers are kept, never the
 * gateway's own rejections, and only for an identified TPP (certificate, signature or token):
 * for a caller without TPP identity every reuse of an id is refused (400), never replayed.
 */
import { z } from "zod";
import type { Next } from "hono";
import {
  type Answer,
  answerBytes,
  type AnswerHeader,
  localReply,
  madeAnswer,
} from "../src/core/answer.ts";
import { errorText } from "../src/lib/mask.ts";
import { type BuildContext, defineCheck, type GatewayContext, modal } from "../src/core/check.ts";
import { sha256Base64 } from "../src/signing/digest.ts";
import { formatError, GatewayError } from "../src/psd2/errors.ts";
import {
  callerId,
  decide,
  decideAgain,
  failField,
  keyPart,
  type SharedStatePlan,
  slotTag,
  storeUnavailable,
  tppKey,
} from "./_shared_state.ts";
import { byteSize, duration } from "../src/lib/fields.ts";
import { RETRY_AFTER_SECONDS } from "../src/psd2/retry_after.ts";
import type {
  DecisionOutcome,
  IdempotencyPart,
  StoredResponse,
  Verdict,
} from "../src/store/types.ts";
import type { Services } from "../src/core/services.ts";
import type { Operation } from "../src/psd2/catalogue.ts";
import { type Identifiers, identifiers } from "../src/psd2/identifiers.ts";

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

/** The options compiled once for one operation; every request of it reads this. */
interface IdempotencyConfig {
  readonly operation: Operation;
  readonly operationId: string;
  /** replay: the same request gets the first answer; unique: any reuse is refused. */
  readonly kind: "replay" | "unique";
  readonly enforce: boolean;
  readonly fail: { readonly check: string; readonly fail: "open" | "closed" };
  readonly retentionMs: number;
  readonly inflightMs: number;
  readonly waitMs: number;
  readonly pollMs: number;
  readonly maxBodyBytes: number;
  readonly services: Services;
  /** The canonical form of ids (the policy's `identifiers`). */
  readonly ids: Identifiers;
}

type Options = z.output<typeof idempotency.options>;

/** The options for one operation, or `undefined` when its method is not checked. */
function compile(options: Options, { operation, services, sections }: BuildContext) {
  const kind = operation.method === "GET" ? options.reads : options.writes;
  if (kind === "none") return undefined;
  const config: IdempotencyConfig = {
    operation,
    operationId: operation.id,
    kind,
    enforce: options.mode === "enforce",
    fail: Object.freeze({ check: KEY, fail: options.fail }),
    retentionMs: options.retention,
    inflightMs: options.inflight,
    waitMs: options.wait,
    pollMs: options.poll,
    maxBodyBytes: options.max_body_bytes,
    services,
    ids: identifiers(sections.identifiers),
  };
  return Object.freeze(config);
}

/**
 * Base64 SHA-256 of the method, path (its ids in their canonical form: the same resource however
 * it is spelt), query and body (see {@link sha256Base64} for why sync).
 */
function fingerprint(c: GatewayContext, config: IdempotencyConfig): string {
  const url = c.req.url;
  const query = url.indexOf("?");
  const path = config.ids.path(config.operation, c.get("params"));
  return sha256Base64(
    `${c.req.method} ${path}${query < 0 ? "" : url.slice(query)}\n`,
    c.get("body"),
  );
}

/**
 * The idempotency part of the request's store decision (none without an X-Request-ID). Only an
 * identified TPP has its answers kept for a replay, under its own key. Callers without a TPP
 * identity share one key space, in which any reuse of an id is refused: whoever sends an id that
 * was seen before, never gets the answer of the request that used it.
 */
function idempotencyPart(
  c: GatewayContext,
  config: IdempotencyConfig,
): IdempotencyPart | undefined {
  const id = c.get("requestId");
  if (!id) return undefined;
  const tpp = tppKey(c);
  const mode = tpp ? config.kind : "unique";
  // A unique id is refused on any reuse and never completed: nothing to compare, no owner token.
  const replays = mode === "replay";
  return {
    // The id's canonical form: an X-Request-ID resent in another case is the same request.
    key: `${slotTag(c, config.services)}idem:${tpp}:${keyPart(config.ids.id("request_id", id))}`,
    mode,
    fingerprint: replays ? fingerprint(c, config) : "",
    token: replays ? crypto.randomUUID() : "",
    enforce: config.enforce,
    inflightMs: config.inflightMs,
    retentionMs: config.retentionMs,
  };
}

/** The answer kept for an X-Request-ID, marked as a replay. */
function replay(stored: StoredResponse): Answer {
  const headers: AnswerHeader[] = stored.headers
    .filter((entry) => entry[0].toLowerCase() !== REPLAY_HEADER)
    .map((entry) => [entry[0].toLowerCase(), entry[1]]);
  headers.push([REPLAY_HEADER, "true"]);
  return {
    status: stored.status,
    headers,
    body: stored.body === "" ? null : Uint8Array.fromBase64(stored.body),
    source: "replay",
  };
}

/** What the request step leaves for the answer step: the claim on the X-Request-ID. */
export interface IdempotencyVariables {
  /** The id this request claimed: the answer step keeps its answer or releases it. */
  idempotencyClaim?: IdempotencyPart;
}

declare module "../src/core/check.ts" {
  interface GatewayVariables extends IdempotencyVariables {}
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function inFlight(outcome: DecisionOutcome): boolean {
  return outcome.verdict?.idempotency?.outcome === "inflight";
}

/** The store's answer after waiting (bounded) for the first request with the id, still in flight. */
async function settled(
  c: GatewayContext,
  config: IdempotencyConfig,
  outcome: DecisionOutcome,
): Promise<DecisionOutcome> {
  const deadline = performance.now() + config.waitMs;
  while (inFlight(outcome) && performance.now() < deadline) {
    await sleep(Math.min(config.pollMs, deadline - performance.now()));
    outcome = await decideAgain(c, config.services);
  }
  return outcome;
}

/** The error for an X-Request-ID the store found used (or in use) already. */
function reuseError(
  outcome: "mismatch" | "duplicate" | "inflight" | "unknown" | "gone",
  id: string,
): GatewayError {
  switch (outcome) {
    case "mismatch":
      return formatError(
        "X-Request-ID",
        `X-Request-ID "${id}" was already used for another request; send a new one`,
      );
    case "duplicate":
      return formatError(
        "X-Request-ID",
        `X-Request-ID "${id}" was already used; every request needs a new one`,
      );
    case "inflight":
      return new GatewayError(
        409,
        "STATUS_INVALID",
        `A request with X-Request-ID "${id}" is still being processed; retry it later`,
        {
          path: "X-Request-ID",
          headers: { "retry-after": String(RETRY_AFTER_SECONDS.inFlight) },
        },
      );
    case "unknown":
      return new GatewayError(
        409,
        "STATUS_INVALID",
        `The request with X-Request-ID "${id}" was not seen to finish; it may have been executed. Read the resource's status, and send a new X-Request-ID if it has to be repeated`,
        { path: "X-Request-ID" },
      );
    case "gone":
      return new GatewayError(
        409,
        "STATUS_INVALID",
        `The request with X-Request-ID "${id}" was processed but its answer is too large to repeat; read the resource instead`,
        { path: "X-Request-ID" },
      );
  }
}

/**
 * The check at request time: replays, refuses or lets the request through as the store decided,
 * and for a claimed write leaves the claim for the answer step.
 */
async function guard(
  c: GatewayContext,
  next: Next,
  config: IdempotencyConfig,
  plan: SharedStatePlan,
): Promise<void> {
  let outcome = await decide(c, plan, config.services);
  if (inFlight(outcome)) outcome = await settled(c, config, outcome);
  if (outcome.error) {
    storeUnavailable(c, config.services, config.fail);
    return next();
  }
  const found: Verdict["idempotency"] = outcome.verdict.idempotency;
  switch (found?.outcome) {
    case undefined:
    case "free":
      // No X-Request-ID, or another check rejects the request: nothing was claimed.
      return next();
    case "replay":
      config.services.metrics.replays.inc();
      return localReply(c, replay(found.response!));
    case "mismatch":
    case "duplicate":
    case "inflight":
    case "unknown":
    case "gone":
      throw reuseError(found.outcome, c.get("requestId"));
    case "claimed":
      break;
    default:
      // Never taken for "go": an outcome this code does not know is a store failure.
      storeUnavailable(c, config.services, config.fail);
      return next();
  }
  const part = outcome.decision.idempotency!;
  // Nothing to keep: the operation wants unique ids only, or the caller has no TPP identity, whose
  // ids are only ever refused on reuse (the store holds no token to complete).
  if (part.mode !== "unique") c.set("idempotencyClaim", part);
  return next();
}

/**
 * The answer step, for a request that claimed its id: keep the answer as it was made (the steps
 * after this one apply to a replay as to the first answer), or release the id when there is none.
 */
async function keep(c: GatewayContext, config: IdempotencyConfig, answer: Answer) {
  const part = c.get("idempotencyClaim");
  if (!part) return;
  const { services } = config;
  const made = madeAnswer(answer);
  const status = made.status;
  // An answer the bank gave, or the gateway's "outcome unknown" for a write that may have
  // reached it, is kept; anything else (the bank unreachable, or saying "try again") frees the
  // id for a retry.
  const unknown = c.get("outcomeUnknown") === true;
  if (!unknown && (!c.get("upstream") || status >= 500 || TRANSIENT.has(status))) {
    services.log.info({
      msg: "idempotency key released",
      op: config.operationId,
      request_id: c.get("requestId"),
      status,
      upstream_status: c.get("upstream")?.status,
    });
    return await finish(c, services, part, "release");
  }
  const body = answerBytes(made);
  if (body.byteLength > config.maxBodyBytes) {
    return await finish(c, services, part, "gone");
  }
  await finish(c, services, part, "done", {
    status,
    headers: kept(made.headers),
    body: body.toBase64(),
  });
}

/**
 * The headers kept for a replay, as the response's `Headers` lists them: lower-case names in
 * order, the values of a repeated name joined by ", ", without those of one exchange.
 */
function kept(headers: readonly AnswerHeader[]): [string, string][] {
  const list: [string, string][] = [];
  for (const [name, value] of headers) if (!NOT_KEPT.has(name)) list.push([name, value]);
  list.sort((a, b) => a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
  for (let i = list.length - 1; i > 0; i--) {
    if (list[i][0] === list[i - 1][0]) {
      list[i - 1] = [list[i][0], `${list[i - 1][1]}, ${list[i][1]}`];
      list.splice(i, 1);
    }
  }
  return list;
}

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

export const idempotency = defineCheck({
  key: KEY,
  description: "X-Request-ID uniqueness, with replay of the first answer for repeated writes",
  options: modal({
    fail: failField("closed"),
    writes: z.enum(["replay", "unique", "none"]).default("replay").describe(
      "POST, PUT, DELETE: replay the first answer to the same request of the same identified TPP (callers without TPP identity: reject any reuse); unique: reject any reuse; none: no check",
    ),
    reads: z.enum(["unique", "none"]).default("none").describe(
      "GET: unique: reject a reused X-Request-ID; none: no check",
    ),
    retention: duration().prefault("24h").describe(
      "How long an X-Request-ID and its answer are kept, for example 24h",
    ),
    max_body_bytes: byteSize().default(65_536).describe(
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
    const config = compile(options, context);
    if (!config) return undefined;
    const plan = context.decisions;
    plan.idempotency = (c) => idempotencyPart(c, config);
    plan.owner ??= (c) => callerId(c, config.ids);
    return {
      request: (c, next) => guard(c, next, config, plan),
      answer: (c, answer) => keep(c, config, answer),
    };
  },
});
