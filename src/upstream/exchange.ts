/**
 * What the proxy asks of an upstream client, and how an exchange fails: the contract both clients
 * (src/upstream/http1/client.ts, src/upstream/fetch.ts) keep.
 */
import type { Bytes } from "../lib/body.ts";

/** One exchange with the upstream. */
export interface UpstreamRequest {
  method: string;
  /** Scheme, host and port, as `URL.origin` gives them: `https://core.bank.example:8443`. */
  origin: string;
  /** Path and query: `/psd2/v1/payments/sepa-credit-transfers?x=1`. */
  target: string;
  /** Header pairs to send; the client adds Host and the body's framing. */
  headers: [string, string][];
  body?: Bytes;
  /** Deadline of the whole exchange (connect, request, answer and its body), in milliseconds. */
  timeoutMs: number;
  /** Largest answer body accepted; a larger one is {@link UpstreamError} `too_large`. */
  maxBytes: number;
}

/** The upstream's answer, read whole. */
export interface UpstreamAnswer {
  status: number;
  /** Header pairs with lower-case names, framing headers included, in the order received. */
  headers: [string, string][];
  body: Bytes;
  /**
   * True when only the end of the connection framed the body (no Content-Length, not chunked):
   * a cut connection then looks like a complete answer.
   */
  closeDelimited: boolean;
}

/**
 * Why an exchange failed:
 * - `refused`: no connection could be opened; the request never reached the upstream.
 * - `reset`: the connection failed before the answer's head was complete.
 * - `broken`: the connection failed after the head, or the answer was malformed.
 * - `timeout`: the deadline passed.
 * - `too_large`: the answer body exceeds `maxBytes`.
 */
export type UpstreamFailure = "refused" | "reset" | "broken" | "timeout" | "too_large";

/** An exchange with the upstream failed; {@link UpstreamFailure} says how far it got. */
export class UpstreamError extends Error {
  constructor(readonly failure: UpstreamFailure, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "UpstreamError";
  }
}

/**
 * Whether an answer echoes an X-Request-ID that is not the request's (compared without case and
 * surrounding spaces; `echoed` as `Headers.get` gives it, repeated values joined): it answers
 * another request, and the connection it came on is out of step. An answer without one says
 * nothing either way.
 */
export function answersAnother(
  request: UpstreamRequest,
  echoed: string | null | undefined,
): boolean {
  if (echoed === null || echoed === undefined) return false;
  const sent = request.headers.find(([name]) => name === "x-request-id")?.[1];
  return sent === undefined || echoed.trim().toLowerCase() !== sent.trim().toLowerCase();
}

/** The failure of an answer to another request (see {@link answersAnother}). */
export function otherRequestsAnswer(): UpstreamError {
  return new UpstreamError(
    "broken",
    "The upstream's answer is malformed: its X-Request-ID is another request's",
  );
}

/** A client of the upstream. */
export interface Upstream {
  send(request: UpstreamRequest): Promise<UpstreamAnswer>;
  /** Closes idle connections; exchanges under way finish. */
  close(): void;
}
