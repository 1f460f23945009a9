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
  type Upstream,
  type UpstreamAnswer,
  UpstreamError,
  type UpstreamRequest,
} from "../exchange.ts";
import type { Connection } from "./connection.ts";
import { Pool } from "./pool.ts";
import { encodeRequest } from "./wire.ts";

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
