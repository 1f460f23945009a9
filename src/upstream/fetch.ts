/**
 * The upstream client over the runtime's `fetch` (`upstream.client: fetch`): HTTP/2 where the
 * core offers it, the platform's outbound proxy settings, and runtimes without outbound TCP.
 */
import { BodyLimitError, readBody } from "../lib/body.ts";
import { deadlineSignal } from "../lib/deadline.ts";
import { answersAnother, otherRequestsAnswer, type Upstream, UpstreamError } from "./exchange.ts";

/** The connection to the upstream could not be opened: the request never reached it. */
function isConnectFailure(error: unknown): boolean {
  const text = String(error) + String((error as { cause?: unknown })?.cause ?? "");
  return /client error \(Connect\)|tcp connect error|Connection refused|ECONNREFUSED/i.test(text);
}

function isTimeout(error: unknown): boolean {
  return error instanceof DOMException &&
    (error.name === "TimeoutError" || error.name === "AbortError");
}

/** A client of its own (a pool of connections), where the runtime has them. */
function httpClient(): Deno.HttpClient | undefined {
  return typeof Deno.createHttpClient === "function" ? Deno.createHttpClient({}) : undefined;
}

/**
 * An {@link Upstream} that sends every exchange with `fetch`, over connections of its own HTTP
 * client: `fetch` cannot close the one connection an answer showed out of step (another request's
 * X-Request-ID; the connection would give the next request a late answer), so that client is
 * closed and replaced (exchanges under way finish).
 */
export function fetchUpstream(fetch: typeof globalThis.fetch): Upstream {
  let client = httpClient();
  return {
    async send(request) {
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
        if (answersAnother(request, response.headers.get("x-request-id"))) {
          await response.body?.cancel();
          client?.close();
          client = httpClient();
          throw otherRequestsAnswer();
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
