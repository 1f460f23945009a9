/**
 * A misbehaving upstream for fault-injection tests: a raw TCP server on 127.0.0.1 that speaks just
 * enough HTTP/1.1 to read the gateway's requests and then answers each one as the test tells it:
 * normally, with a 5xx or a malformed body, never (stall), half (then closes the connection),
 * slowly (trickle), with a body larger than the gateway accepts, with raw bytes of the test's
 * (malformed heads, framing split across writes, answers nobody asked for), or not at all because
 * nothing listens (refuse). It records every connection (and whether the gateway closed it) and
 * every request with its bytes, so that tests can assert what reached it, that writes reached it
 * once and that no socket was leaked.
 */

/** How the upstream answers one request. */
export type Fault =
  /** A complete answer (Content-Length, chunked, or ended by closing the connection). */
  | {
    kind: "answer";
    status?: number;
    headers?: Record<string, string>;
    body?: string | Uint8Array;
    framing?: Framing;
  }
  /** Read the request and never answer (`after: "headers"`: send the head and part of the body first). */
  | { kind: "stall"; after?: "request" | "headers"; status?: number }
  /** Send part of the answer and close the connection: before the head, inside it, or inside the body. */
  | { kind: "reset"; stage: "head" | "body"; status?: number; framing?: Framing }
  /** Send the answer `chunkBytes` at a time, one chunk every `intervalMs`. */
  | { kind: "trickle"; status?: number; body: string; chunkBytes: number; intervalMs: number }
  /** A body of `bytes` bytes of JSON-ish filler, streamed. */
  | { kind: "huge"; status?: number; bytes: number; framing?: "length" | "chunked" }
  /**
   * Raw bytes, one write per part (a string is a byte string: code units 0-255), each part after
   * its delay; then the connection is kept for the next request (default) or closed.
   */
  | { kind: "raw"; parts: RawPart[]; then?: "keep" | "close" };

/** One write of a raw answer. */
export interface RawPart {
  bytes: string | Uint8Array;
  /** Wait this long before writing it. */
  delayMs?: number;
}

/** How an answer's body is delimited. */
export type Framing = "length" | "chunked" | "close";

/** A request as the upstream read it. */
export interface SeenRequest {
  method: string;
  path: string;
  headers: Headers;
  body: string;
  /** The request's head as received (request line and header lines), as a byte string. */
  head: string;
  /** Number of the connection it came on (from 1). */
  connection: number;
}

/** One accepted connection. */
export interface SeenConnection {
  id: number;
  /** Requests read on it. */
  requests: number;
  /** Resolves when the connection is gone, with who ended it. */
  ended: Promise<"peer" | "upstream" | "shutdown">;
  /** Who ended it, once it has ended. */
  end?: "peer" | "upstream" | "shutdown";
}

/** A running faulty upstream. */
export interface FaultyUpstream extends AsyncDisposable {
  url: string;
  port: number;
  /** The behaviour for the next requests (a fixed fault, or chosen per request). */
  fault: Fault | ((request: SeenRequest) => Fault);
  requests: SeenRequest[];
  connections: SeenConnection[];
  /** Stops listening: connections are refused until {@link FaultyUpstream.listen}. */
  refuse(): void;
  /** Listens again on the same port. */
  listen(): void;
  /** Requests that carried this X-Request-ID. */
  executions(requestId: string): number;
  /** Waits until every connection has ended (bounded by `ms`); returns those still open. */
  settled(ms?: number): Promise<SeenConnection[]>;
  close(): Promise<void>;
}

/** A well-formed JSON answer of a payment initiation. */
export function paymentCreated(paymentId = "pay-1"): Fault {
  return {
    kind: "answer",
    status: 201,
    headers: {
      "content-type": "application/json",
      location: `/psd2/v1/payments/sepa/${paymentId}`,
    },
    body: JSON.stringify({
      transactionStatus: "RCVD",
      paymentId,
      _links: {
        scaRedirect: { href: "https://sca.bank.example/redirect" },
        self: { href: `/psd2/v1/payments/sepa-credit-transfers/${paymentId}` },
        status: { href: `/psd2/v1/payments/sepa-credit-transfers/${paymentId}/status` },
      },
    }),
  };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const HEAD_END = encoder.encode("\r\n\r\n");
const REASONS: Record<number, string> = {
  200: "OK",
  201: "Created",
  204: "No Content",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

function indexOf(haystack: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i <= haystack.length - needle.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

function head(status: number, headers: Record<string, string>, framing: Framing, length: number) {
  const lines = [`HTTP/1.1 ${status} ${REASONS[status] ?? "Status"}`, "server: legacy-core/7.2"];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  if (framing === "length") lines.push(`content-length: ${length}`);
  if (framing === "chunked") lines.push("transfer-encoding: chunked");
  if (framing === "close") lines.push("connection: close");
  return encoder.encode(lines.join("\r\n") + "\r\n\r\n");
}

/**
 * An answer as raw bytes (a byte string): status line, the header lines as given (nothing is
 * checked or added but Content-Length), the body.
 */
export function rawAnswer(
  status: number,
  headerLines: string[],
  body = "",
  options: { length?: boolean } = {},
): string {
  const lines = [`HTTP/1.1 ${status} ${REASONS[status] ?? "Status"}`, ...headerLines];
  if (options.length ?? true) lines.push(`content-length: ${body.length}`);
  return lines.join("\r\n") + "\r\n\r\n" + body;
}

/** A byte string's bytes (code units 0-255). */
export function byteString(text: string): Uint8Array {
  return Uint8Array.from(text, (c) => c.charCodeAt(0));
}

/** Bytes as a byte string. */
function latin1(bytes: Uint8Array): string {
  let out = "";
  for (const byte of bytes) out += String.fromCharCode(byte);
  return out;
}

function chunk(bytes: Uint8Array): Uint8Array {
  return concat(
    encoder.encode(bytes.length.toString(16) + "\r\n"),
    concat(bytes, encoder.encode("\r\n")),
  );
}

/** Thrown inside a connection's loop when the peer went away while we wrote. */
class PeerGone extends Error {}

/** Starts a faulty upstream (default fault: a created payment). */
export function startFaultyUpstream(
  fault: FaultyUpstream["fault"] = paymentCreated(),
): FaultyUpstream {
  let listener: Deno.Listener | undefined;
  let port = 0;
  let closing = false;
  const stop = new AbortController();
  const open = new Set<Deno.Conn>();
  const loops = new Set<Promise<unknown>>();
  const requests: SeenRequest[] = [];
  const connections: SeenConnection[] = [];

  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (stop.signal.aborted) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        stop.signal.removeEventListener("abort", done);
        resolve();
      }
      stop.signal.addEventListener("abort", done);
    });
  }

  async function write(conn: Deno.Conn, bytes: Uint8Array) {
    try {
      let offset = 0;
      while (offset < bytes.length) offset += await conn.write(bytes.subarray(offset));
    } catch {
      throw new PeerGone();
    }
  }

  /** Answers one request; returns whether the connection stays usable. */
  async function respond(conn: Deno.Conn, fault: Fault): Promise<"keep" | "close" | "stall"> {
    switch (fault.kind) {
      case "answer": {
        const framing = fault.framing ?? "length";
        const body = fault.body instanceof Uint8Array
          ? fault.body
          : encoder.encode(fault.body ?? "");
        const headers = { "content-type": "application/json", ...fault.headers };
        await write(conn, head(fault.status ?? 200, headers, framing, body.length));
        if (framing === "chunked") {
          if (body.length) await write(conn, chunk(body));
          await write(conn, encoder.encode("0\r\n\r\n"));
        } else await write(conn, body);
        return framing === "close" ? "close" : "keep";
      }
      case "stall":
        if (fault.after === "headers") {
          const headers = { "content-type": "application/json" };
          await write(conn, head(fault.status ?? 201, headers, "length", 200));
          await write(conn, encoder.encode('{"transactionStatus":"RCVD",'));
        }
        return "stall";
      case "reset": {
        const body = encoder.encode((paymentCreated() as { body: string }).body);
        const framing = fault.framing ?? "length";
        const whole = head(
          fault.status ?? 201,
          { "content-type": "application/json" },
          framing,
          body.length,
        );
        if (fault.stage === "head") {
          await write(conn, whole.subarray(0, Math.floor(whole.length / 2)));
          return "close";
        }
        await write(conn, whole);
        const half = body.subarray(0, Math.floor(body.length / 2));
        await write(conn, framing === "chunked" ? chunk(half) : half);
        return "close";
      }
      case "trickle": {
        const body = encoder.encode(fault.body);
        const headers = { "content-type": "application/json" };
        await write(conn, head(fault.status ?? 200, headers, "length", body.length));
        for (let i = 0; i < body.length && !closing; i += fault.chunkBytes) {
          await sleep(fault.intervalMs);
          await write(conn, body.subarray(i, i + fault.chunkBytes));
        }
        return "keep";
      }
      case "huge": {
        const framing = fault.framing ?? "length";
        const headers = { "content-type": "application/json" };
        await write(conn, head(fault.status ?? 200, headers, framing, fault.bytes));
        const piece = encoder.encode('{"filler":"' + "x".repeat(65_536 - 14) + '"}\n');
        for (let sent = 0; sent < fault.bytes && !closing;) {
          const part = piece.subarray(0, Math.min(piece.length, fault.bytes - sent));
          await write(conn, framing === "chunked" ? chunk(part) : part);
          sent += part.length;
        }
        if (framing === "chunked") await write(conn, encoder.encode("0\r\n\r\n"));
        return "keep";
      }
      case "raw":
        for (const part of fault.parts) {
          if (part.delayMs) await sleep(part.delayMs);
          if (closing) return "close";
          await write(conn, typeof part.bytes === "string" ? byteString(part.bytes) : part.bytes);
        }
        return fault.then ?? "keep";
    }
  }

  async function serve(conn: Deno.Conn, seen: SeenConnection): Promise<SeenConnection["end"]> {
    let buffer: Uint8Array = new Uint8Array(0);
    const scratch = new Uint8Array(65_536);
    async function more(): Promise<boolean> {
      let n: number | null;
      try {
        n = await conn.read(scratch);
      } catch {
        return false;
      }
      if (n === null) return false;
      buffer = concat(buffer, scratch.subarray(0, n));
      return true;
    }
    try {
      for (;;) {
        let end: number;
        while ((end = indexOf(buffer, HEAD_END)) < 0) if (!await more()) return "peer";
        const raw = latin1(buffer.subarray(0, end));
        const [requestLine, ...lines] = decoder.decode(buffer.subarray(0, end)).split("\r\n");
        const headers = new Headers();
        for (const line of lines) {
          const colon = line.indexOf(":");
          headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
        }
        if (headers.has("transfer-encoding")) throw new Error("chunked requests are not supported");
        const length = Number(headers.get("content-length") ?? 0);
        while (buffer.length < end + 4 + length) if (!await more()) return "peer";
        const body = decoder.decode(buffer.subarray(end + 4, end + 4 + length));
        buffer = buffer.slice(end + 4 + length);
        const [method, path] = requestLine.split(" ");
        const request = { method, path, headers, body, head: raw, connection: seen.id };
        requests.push(request);
        seen.requests++;
        const chosen = typeof upstream.fault === "function"
          ? upstream.fault(request)
          : upstream.fault;
        const next = await respond(conn, chosen);
        if (closing) return "shutdown";
        if (next === "close") return "upstream";
        if (next === "stall") {
          // Nothing more is sent: wait for the peer to give up and close.
          while (await more()) { /* a stalled connection gets no further request */ }
          return closing ? "shutdown" : "peer";
        }
      }
    } catch (error) {
      if (closing) return "shutdown";
      if (error instanceof PeerGone) return "peer";
      throw error;
    }
  }

  function accept(conn: Deno.Conn) {
    let resolve!: (end: "peer" | "upstream" | "shutdown") => void;
    const seen: SeenConnection = {
      id: connections.length + 1,
      requests: 0,
      ended: new Promise((r) => resolve = r),
    };
    connections.push(seen);
    open.add(conn);
    const loop = serve(conn, seen).then((end) => {
      open.delete(conn);
      try {
        conn.close();
      } catch {
        // Already closed.
      }
      seen.end = end ?? "peer";
      resolve(seen.end);
    });
    loops.add(loop);
    loop.finally(() => loops.delete(loop));
  }

  function listen() {
    const l = Deno.listen({ hostname: "127.0.0.1", port });
    listener = l;
    port = (l.addr as Deno.NetAddr).port;
    const loop = (async () => {
      try {
        for await (const conn of l) accept(conn);
      } catch {
        // Listener closed.
      }
    })();
    loops.add(loop);
    loop.finally(() => loops.delete(loop));
  }

  function refuse() {
    listener?.close();
    listener = undefined;
  }

  listen();

  const close = async () => {
    if (closing) return;
    closing = true;
    stop.abort();
    refuse();
    for (const conn of open) {
      try {
        conn.close();
      } catch {
        // Already closed.
      }
    }
    while (loops.size) await Promise.all([...loops]);
  };

  const upstream: FaultyUpstream = {
    url: `http://127.0.0.1:${port}`,
    port,
    fault,
    requests,
    connections,
    refuse,
    listen,
    executions: (id) => requests.filter((r) => r.headers.get("x-request-id") === id).length,
    async settled(ms = 3000) {
      const pending = connections.filter((c) => !c.end);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<void>((r) => timer = setTimeout(r, ms));
      await Promise.race([Promise.all(pending.map((c) => c.ended)), timeout]);
      clearTimeout(timer);
      return connections.filter((c) => !c.end);
    },
    close,
    [Symbol.asyncDispose]: close,
  };
  return upstream;
}
