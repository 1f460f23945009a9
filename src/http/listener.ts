/**
 * A listener that outlives its failures. When accepting fails (EMFILE: every file descriptor in
 * use, under a flood of connections or slow clients), `Deno.serve` stops listening and its
 * `finished` promise rejects; left alone, that rejection ends the process. Here it is logged, and
 * the listener is opened again on the same address after a pause (100 ms, doubling up to 2 s),
 * until descriptors are free again.
 *
 * Deno's server has no timeout for request heads or idle connections: a slow client holds its
 * descriptor as long as it likes. The TLS terminator in front bounds that (docs/terminator.md).
 */
import type { Logger } from "../lib/log.ts";

/** Longest pause before the listener is opened again, in milliseconds. */
const MAX_PAUSE_MS = 2000;

/** A listener kept open: {@link serveResiliently}. */
export interface ResilientServer {
  /** The address it listens on (the port chosen at the first start when 0 was asked). */
  readonly addr: Deno.NetAddr;
  /** Stops listening and lets requests in flight finish. */
  shutdown(): Promise<void>;
}

/**
 * A listener that cannot open at start-up: the port is in use, the address is not this host's, or
 * the port needs privileges. A configuration error, not an outage: `listener` says whose port.
 */
export class ListenError extends Error {
  readonly listener: string;
  readonly hostname: string;
  readonly port: number;
  constructor(listen: { hostname: string; port: number; name: string }, cause: unknown) {
    const why = cause instanceof Deno.errors.AddrInUse
      ? "is in use (another process listens on it)"
      : `cannot be opened: ${cause instanceof Error ? cause.message : String(cause)}`;
    super(`Port ${listen.port} on "${listen.hostname}" ${why}`);
    this.name = "ListenError";
    this.listener = listen.name;
    this.hostname = listen.hostname;
    this.port = listen.port;
  }
}

/**
 * `Deno.serve` on `hostname:port`, opened again whenever it fails. Throws {@link ListenError} when
 * the first start fails (a port in use is a configuration error, not an outage).
 */
export function serveResiliently(
  listen: { hostname: string; port: number; name: string },
  handler: Deno.ServeHandler<Deno.NetAddr>,
  log: Logger,
): ResilientServer {
  let stopped = false;
  let pause = 100;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let current: Deno.HttpServer<Deno.NetAddr>;

  function open(port: number): Deno.HttpServer<Deno.NetAddr> {
    const server = Deno.serve({ hostname: listen.hostname, port, onListen: () => {} }, handler);
    server.finished.catch((error) => {
      if (stopped || server !== current) return;
      log.error({
        msg: "the listener failed; it is opened again after a pause",
        listener: listen.name,
        error: String(error).slice(0, 200),
        pause_ms: pause,
      });
      again();
    });
    return server;
  }

  function again() {
    retry = setTimeout(() => {
      retry = undefined;
      if (stopped) return;
      try {
        current = open(addr.port);
        pause = 100;
        log.info({ msg: "the listener is open again", listener: listen.name, port: addr.port });
      } catch (error) {
        log.error({
          msg: "the listener cannot be opened yet",
          listener: listen.name,
          error: String(error).slice(0, 200),
          pause_ms: pause,
        });
        again();
      }
    }, pause);
    pause = Math.min(pause * 2, MAX_PAUSE_MS);
  }

  try {
    current = open(listen.port);
  } catch (error) {
    throw new ListenError(listen, error);
  }
  const addr = current.addr;
  return {
    addr,
    async shutdown() {
      stopped = true;
      clearTimeout(retry);
      await current.shutdown().catch(() => {});
    },
  };
}
