/**
 * The idle keep-alive connections of the upstream client, per origin: a connection is taken for
 * one exchange and given back only when its answer left it clean; idle ones watch for the
 * upstream closing them, and are dropped past an age.
 */
import { connect, type Connection } from "./connection.ts";

/** Idle connections kept per origin. */
const MAX_IDLE = 256;
/** An idle connection older than this is closed instead of reused (servers often close at 5 s). */
const IDLE_MS = 4_000;

/** Where an origin's connections go, and its idle ones. */
export interface Endpoint {
  hostname: string;
  port: number;
  tls: boolean;
  /** The Host header. */
  host: string;
  idle: Connection[];
}

/** The connections of one client. */
export class Pool {
  readonly #endpoints = new Map<string, Endpoint>();
  #closed = false;
  /** Connections opened so far (for tests). */
  opened = 0;

  /** The endpoint of an origin (`https://core.bank.example:8443`). */
  endpoint(origin: string): Endpoint {
    let endpoint = this.#endpoints.get(origin);
    if (!endpoint) {
      const url = new URL(origin);
      const tls = url.protocol === "https:";
      endpoint = {
        hostname: url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname,
        port: Number(url.port) || (tls ? 443 : 80),
        tls,
        host: url.host,
        idle: [],
      };
      this.#endpoints.set(origin, endpoint);
    }
    return endpoint;
  }

  /** An idle connection of the endpoint that can carry an exchange, or `undefined`. */
  take(endpoint: Endpoint): Connection | undefined {
    const idle = endpoint.idle;
    const now = performance.now();
    while (idle.length > 0) {
      const connection = idle.pop()!;
      connection.idle = false;
      if (connection.closed) continue;
      if (now - connection.idleSince > IDLE_MS) {
        connection.close();
        continue;
      }
      connection.conn.ref();
      return connection;
    }
    return undefined;
  }

  /** Opens a new connection to the endpoint. */
  async open(endpoint: Endpoint): Promise<Connection> {
    const connection = await connect(endpoint);
    this.opened++;
    return connection;
  }

  /** Gives a connection back after a clean exchange; it idles, watched, until taken again. */
  release(endpoint: Endpoint, connection: Connection) {
    const idle = endpoint.idle;
    if (this.#closed || idle.length >= MAX_IDLE) {
      connection.close();
      return;
    }
    connection.idle = true;
    connection.idleSince = performance.now();
    connection.conn.unref();
    connection.watch(() => {
      connection.close();
      const at = idle.indexOf(connection);
      if (at >= 0) idle.splice(at, 1);
    });
    idle.push(connection);
  }

  /** Closes every idle connection; connections in use are closed when their exchange ends. */
  close(): void {
    this.#closed = true;
    for (const endpoint of this.#endpoints.values()) {
      for (const connection of endpoint.idle) connection.close();
      endpoint.idle.length = 0;
    }
  }
}
