/**
 * The answer side of the chain (Envoy's encoder filters): what the gateway is about to send, the
 * steps a check declares on it, and the one place that turns it into the response.
 *
 * Every answer the gateway sends to a TPP on an operation's path is an {@link Answer}, whoever made
 * it: the core (through the proxy), a replay of a kept answer, the catalogue cache, or the gateway
 * itself (an error). The chain passes each through the operation's answer steps in reverse check
 * order and then {@link finish}es it, so that a rule on the answer is written once and holds on
 * every path.
 */
import type { Answer, AnswerHeader, GatewayContext } from "./check.ts";
// The headers the checks decided for the answer (`answerHeaders`) are declared there.
import type {} from "./request.ts";
import { errorBody, GatewayError } from "../psd2/errors.ts";
import type { Bytes } from "../lib/body.ts";
import { isJson } from "../lib/media_type.ts";
import { utf8 } from "../lib/utf8.ts";

export type { Answer, AnswerHeader, AnswerSource, AnswerStep } from "./check.ts";

/** What a local answer of a check (a replay, a cache hit) waits in until the answer steps run. */
export interface AnswerVariables {
  /** The answer a check gave instead of passing the request on (see {@link localReply}). */
  localReply?: Answer;
}

declare module "./check.ts" {
  interface GatewayVariables extends AnswerVariables {}
}

const REPLIED: Promise<void> = Promise.resolve();

/**
 * Answers the request from a check (Envoy's local reply): the checks after it and the terminal do
 * not run, and the answer still passes every answer step. The check returns what this returns,
 * without calling `next`: `return localReply(c, answer)`.
 */
export function localReply(c: GatewayContext, answer: Answer): Promise<void> {
  c.set("localReply", answer);
  return REPLIED;
}

/** A copy of `answer` with `changes`, that remembers the answer as it was made. */
export function changed(
  answer: Answer,
  changes: Partial<Pick<Answer, "status" | "headers" | "body">>,
): Answer {
  return { ...answer, ...changes, made: answer.made ?? answer };
}

/** The answer as its source made it, before any step changed it: what a replay keeps. */
export function madeAnswer(answer: Answer): Answer {
  return answer.made ?? answer;
}

/** The first value of a header of the answer, or `undefined`. */
export function headerOf(answer: Answer, name: string): string | undefined {
  for (const entry of answer.headers) if (entry[0] === name) return entry[1];
  return undefined;
}

/** Whether the answer's Content-Type names JSON (case-insensitive, parameters ignored). */
export function isJsonAnswer(answer: Answer): boolean {
  return isJson(headerOf(answer, "content-type"));
}

const encoder = new TextEncoder();

/** The answer's body as bytes (empty for none). */
export function answerBytes(answer: Answer): Bytes {
  const { body } = answer;
  if (body === null) return new Uint8Array(0);
  return typeof body === "string" ? encoder.encode(body) : body;
}

/** The text of each answer body already decoded, so that several steps decode it once. */
const texts = new WeakMap<Answer, string | null>();

/**
 * The answer's body as UTF-8 text (a byte order mark kept, so that a rewrite changes nothing
 * else), or `undefined` when it has none or is not UTF-8.
 */
export function answerText(answer: Answer): string | undefined {
  const { body } = answer;
  if (body === null) return undefined;
  if (typeof body === "string") return body;
  let text = texts.get(answer);
  if (text === undefined) {
    text = utf8(body, "keep") ?? null;
    texts.set(answer, text);
  }
  return text ?? undefined;
}

/** The parsed JSON of each answer, so that several steps parse it once. */
const parsed = new WeakMap<Answer, unknown>();

/**
 * The answer's body as JSON, when its Content-Type says JSON and it parses; else `undefined`.
 * The value is shared between the steps that read it: none may change it.
 */
export function answerJson(answer: Answer): unknown {
  if (parsed.has(answer)) return parsed.get(answer);
  let value: unknown;
  const text = isJsonAnswer(answer) ? answerText(answer) : undefined;
  if (text !== undefined) {
    try {
      value = JSON.parse(text);
    } catch {
      value = undefined;
    }
  }
  parsed.set(answer, value);
  return value;
}

/** The Berlin Group answer of an error, made by the gateway. */
export function errorAnswer(error: GatewayError): Answer {
  const headers: AnswerHeader[] = [];
  if (error.headers) {
    for (const name in error.headers) headers.push([name.toLowerCase(), error.headers[name]]);
  }
  headers.push(["content-type", "application/json"], ["cache-control", "no-store"]);
  return { status: error.status, headers, body: errorBody(error), source: "gateway" };
}

/** The answer to an unknown failure: a generic 500 with nothing internal. */
export const INTERNAL_ERROR: GatewayError = new GatewayError(
  500,
  "INTERNAL_ERROR",
  "The gateway failed to process the request",
);

/** Statuses whose answers carry no content (RFC 9110 15.3.5, 15.3.6, 15.4.5). */
const NO_CONTENT = new Set([204, 205, 304]);

/**
 * Turns the answer into the response, the last step of every answer: the headers the checks
 * decided for this request (X-Request-ID, RateLimit-*, Deprecation: see `answerHeader`) replace
 * the answer's own of the same name, and `X-Content-Type-Options: nosniff` is on every answer.
 */
export function finish(c: GatewayContext, answer: Answer): Response {
  return toResponse(answer, c.get("answerHeaders"));
}

/**
 * The response of an answer with the headers `decided` for its request (see {@link finish}).
 *
 * The headers are added to a response made without them: as a ResponseInit's `headers` they cost
 * this runtime about 4.5 us per answer (converted as a sequence, then each checked), appended
 * about 1 (a loop of `new Response`, 8 headers). A text body gave the response a default
 * `text/plain` type, which the first content type of the answer (or of `decided`) replaces, as
 * the constructor would have let it.
 */
export function toResponse(answer: Answer, decided?: readonly [string, string][]): Response {
  const { body } = answer;
  // A Response with one of these statuses cannot have a body.
  const empty = body === null || NO_CONTENT.has(answer.status) ||
    (typeof body === "string" ? body.length === 0 : body.byteLength === 0);
  const response = new Response(empty ? null : body, { status: answer.status });
  const headers = response.headers;
  let typed = false;
  const add = (name: string, value: string) => {
    if (name === "content-type" && !typed) {
      typed = true;
      headers.set(name, value);
    } else headers.append(name, value);
  };
  for (const entry of answer.headers) {
    const name = entry[0];
    if (name === "x-content-type-options") continue;
    if (decided !== undefined && decided.some((own) => own[0] === name)) continue;
    add(name, entry[1]);
  }
  headers.append("x-content-type-options", "nosniff");
  for (const [name, value] of decided ?? []) add(name, value);
  return response;
}

/** The answer of any failure: its own for a {@link GatewayError}, else {@link INTERNAL_ERROR}. */
export function failureAnswer(error: unknown): Answer {
  return errorAnswer(error instanceof GatewayError ? error : INTERNAL_ERROR);
}
