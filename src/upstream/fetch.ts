/**
 * The upstream client over the runtime's `fetch` (`upstream.client: fetch`): HTTP/2 where the
 * core offers it, the platform's outbound proxy settings, and runtimes without outbound TCP.
 */
import { BodyLimitError, readBody } from "../lib/body.ts";
import { deadlineSignal } from "../lib/deadline.ts";
import { answersAnother, otherRequestsAnswer, type Upstream, UpstreamError } from "./exchange.ts";
import type { Reuse } from "./http1/client.ts";

/** The connection to the upstream could not be opened: the request never reached it. */
function isConnectFailure(error: unknown): boolean {
  const text = String(error) + String((error as { cause?: unknown })?.cause ?? "");
  return /client error \(Connect\)|tcp connect error|Connection refused|ECONNREFUSED/i.test(text);
}

function isTimeout(error: unknown): boolean {
  return error instanceof DOMException &&
    (error.name === "TimeoutError" || error.name === "AbortError");
}

/**
 * A client of its own (a pool of connections), where the runtime has them; one that keeps no idle
 * connection when `reuse` is false.
 */
function httpClient(reuse: boolean): Deno.HttpClient | undefined {
  if (typeof Deno.createHttpClient !== "function") return undefined;
  return Deno.createHttpClient(reuse ? {} : { poolMaxIdlePerHost: 0 });
}

/**
 * An {@link Upstream} that sends every exchange with `fetch`, over connections of its own HTTP
 * client: `fetch` cannot close the one connection an answer showed out of step (another request's
 * X-Request-ID; the connection would give the next request a late answer), so that client is
 * closed and replaced (exchanges under way finish).
 *
 * `reuse` as for the HTTP/1.1 client ({@link Reuse}), as far as `fetch` lets it be seen: the
 * runtime's pool (hyper's) does not say whether an exchange went on a reused connection, and it
 * reuses one on which bytes arrived as the next request was written. Under `echoed`, the first
 * answer without the echo makes the client one that keeps no idle connection (every later
 * exchange on a new one), and is refused when an earlier answer echoed (it may be a late answer
 * on a reused connection); `never` keeps no idle connection from the start.
 */
export function fetchUpstream(fetch: typeof globalThis.fetch, reuse: Reuse = "echoed"): Upstream {
  let pooled = reuse !== "never";
  let client = httpClient(pooled);
  /** Whether an answer echoed its X-Request-ID: the core echoes. */
  let echoes = false;
  return {
    async send(request) {
      const sentPooled = pooled;
      const signal = deadlineSignal(request.timeoutMs);
      let answered = false;
      try {
        const response = await fetch(request.origin + request.target, {
          method: request.method,
          headers: request.headers,
          body: request.body && request.body.byteLength > 0 ? request.body : undefined,
          redirect: "manual",
          signal,
          ...(client ? { client } : {}),
        });
        answered = true;
        if (response.status < 200 || response.status > 599) {
          // RFC 9110 15: status codes end at 599, and a Response cannot carry any other. The only
          // 1xx that `fetch` hands over is a 101 nobody asked for: passed on, it would switch the
          // TPP's connection to another protocol.
          await response.body?.cancel();
          throw new UpstreamError("broken", "The upstream's answer is malformed: status line");
        }
        const echoed = response.headers.get("x-request-id");
        if (answersAnother(request, echoed)) {
          await response.body?.cancel();
          client?.close();
          client = httpClient(pooled);
          throw otherRequestsAnswer();
        }
        if (echoed !== null) echoes = true;
        else if (reuse === "echoed" && sentPooled) {
          if (pooled) {
            // The core does not echo: reuse cannot be checked, so none from now on.
            pooled = false;
            client?.close();
            client = httpClient(pooled);
          }
          if (echoes) {
            await response.body?.cancel();
            throw new UpstreamError(
              "broken",
              "The upstream's answer on a reused connection does not echo X-Request-ID",
            );
          }
        }
        const body = await readBody(response, { maxBytes: request.maxBytes });
        const headers: [string, string][] = [];
        response.headers.forEach((value, name) => {
          headers.push([name, value]);
        });
        return {
          status: response.status,
          headers,
          body,
          closeDelimited: !response.headers.has("content-length") &&
            !response.headers.get("transfer-encoding")?.includes("chunked"),
        };
      } catch (error) {
        if (error instanceof UpstreamError) throw error;
        if (error instanceof BodyLimitError) {
          throw new UpstreamError("too_large", "The upstream's answer is too large");
        }
        if (isTimeout(error) || signal.aborted) {
          throw new UpstreamError("timeout", "The upstream did not answer in time", {
            cause: error,
          });
        }
        if (answered) {
          throw new UpstreamError("broken", "The upstream broke the connection", { cause: error });
        }
        const failure = isConnectFailure(error) ? "refused" : "reset";
        throw new UpstreamError(failure, "The upstream exchange failed", { cause: error });
      }
    },
    close() {
      // Once: closing a closed client throws.
      client?.close();
      client = undefined;
    },
  };
}
