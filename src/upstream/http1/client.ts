/**
 * The gateway's HTTP/1.1 client for the upstream (`upstream.client: http1`, the default):
 * keep-alive connections over `Deno.connect` / `Deno.connectTls` (pool.ts), the answer read whole
 * within a size limit (connection.ts, wire.ts) and one deadline for the whole exchange. It does
 * what the proxy needs and no more, for about half the CPU that `fetch` spends per exchange
 * (docs/performance.md).
 */
import { BodyLimitError } from "../../lib/body.ts";
import { onDeadline } from "../../lib/deadline.ts";
import {
  answersAnother,
  otherRequestsAnswer,
  type Upstream,
  type UpstreamAnswer,
  UpstreamError,
  type UpstreamRequest,
} from "../exchange.ts";
import type { Connection } from "./connection.ts";
import { Pool } from "./pool.ts";
import { encodeRequest } from "./wire.ts";

/** The X-Request-ID values of an answer's headers, joined as `Headers.get` joins them. */
function echoedRequestId(headers: readonly [string, string][]): string | undefined {
  let echoed: string | undefined;
  for (const [name, value] of headers) {
    if (name === "x-request-id") echoed = echoed === undefined ? value : `${echoed}, ${value}`;
  }
  return echoed;
}

/** The HTTP/1.1 upstream client. */
export class Http1Upstream implements Upstream {
  readonly #pool = new Pool();

  /** Connections opened so far (for tests). */
  get opened(): number {
    return this.#pool.opened;
  }

  async send(request: UpstreamRequest): Promise<UpstreamAnswer> {
    const pool = this.#pool;
    const endpoint = pool.endpoint(request.origin);
    const bytes = encodeRequest(request, endpoint.host);
    let connection: Connection | undefined;
    let timedOut = false;
    let abortConnect: ((error: Error) => void) | undefined;
    const clear = onDeadline(request.timeoutMs, () => {
      timedOut = true;
      connection?.close();
      abortConnect?.(new Error("The deadline passed while connecting"));
    });
    let answered = false;
    try {
      connection = pool.take(endpoint) ?? await new Promise<Connection>((resolve, reject) => {
        abortConnect = reject;
        pool.open(endpoint).then((opened) => {
          if (timedOut) opened.close();
          resolve(opened);
        }, reject);
      });
      await connection.write(bytes);
      const { head, framing, reusable } = await connection.readHead(request.method);
      answered = true;
      // An answer to another request (one the core wrote late) means the connection is out of
      // step: the exchange fails and the connection is closed.
      if (answersAnother(request, echoedRequestId(head.headers))) throw otherRequestsAnswer();
      const body = await connection.readBody(framing, request.maxBytes);
      clear();
      if (reusable && connection.drained && !timedOut) pool.release(endpoint, connection);
      else connection.close();
      return {
        status: head.status,
        headers: head.headers,
        body,
        closeDelimited: framing.kind === "close",
      };
    } catch (error) {
      clear();
      connection?.close();
      if (timedOut) {
        throw new UpstreamError("timeout", "The upstream did not answer in time", { cause: error });
      }
      if (error instanceof UpstreamError) throw error;
      if (error instanceof BodyLimitError) {
        throw new UpstreamError("too_large", "The upstream's answer is too large");
      }
      if (!connection) {
        throw new UpstreamError("refused", "The upstream could not be reached", { cause: error });
      }
      throw new UpstreamError(
        answered ? "broken" : "reset",
        "The upstream broke the connection",
        { cause: error },
      );
    }
  }

  close(): void {
    this.#pool.close();
  }
}
