/**
 * The gateway's HTTP/1.1 client for the upstream (`upstream.client: http1`, the default):
 * keep-alive connections over `Deno.connect` / `Deno.connectTls` (pool.ts), the answer read whole
 * within a size limit (connection.ts, wire.ts) and one deadline for the whole exchange. It does
 * what the proxy needs and no more, for about half the CPU that `fetch` spends per exchange
 * (docs/performance.md).
 *
 * Which connections carry a second exchange is the policy's `upstream.reuse`: a core that wrote an
 * answer nobody asked for (a second answer, a body after a 204) would give it to the next request
 * on the connection, and the bytes may arrive at any moment of the next exchange: while the
 * connection idles (the idle read notices them and the connection is closed), or together with
 * the next request's write, where no timing tells them from its answer. Only the echo of the
 * request's X-Request-ID does: under `echoed` (the default) a connection is reused only after an
 * answer that echoed it, and an answer on a reused connection must echo it.
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

/**
 * When a connection carries another exchange: `echoed`, after an answer that echoed the
 * request's X-Request-ID (a core that never echoes gets a connection per exchange); `always`,
 * after any clean answer; `never`.
 */
export type Reuse = "echoed" | "always" | "never";

/** The failure of an answer on a reused connection that does not echo the request's id. */
function notEchoed(): UpstreamError {
  return new UpstreamError(
    "broken",
    "The upstream's answer on a reused connection does not echo X-Request-ID",
  );
}

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

  constructor(readonly reuse: Reuse = "echoed") {}

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
      const taken = pool.take(endpoint);
      const reused = taken !== undefined;
      connection = taken ?? await new Promise<Connection>((resolve, reject) => {
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
      const echoed = echoedRequestId(head.headers);
      if (answersAnother(request, echoed)) throw otherRequestsAnswer();
      // On a reused connection only the echo tells this request's answer from a late one.
      if (reused && this.reuse === "echoed" && echoed === undefined) throw notEchoed();
      const body = await connection.readBody(framing, request.maxBytes);
      clear();
      const again = this.reuse === "always" || (this.reuse === "echoed" && echoed !== undefined);
      if (again && reusable && connection.drained && !timedOut) pool.release(endpoint, connection);
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
