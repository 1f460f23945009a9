/**
 * A small server on 127.0.0.1 that speaks the Upstash REST protocol in front of a real
 * redis-server (what Upstash's own local-development server does), so that the `upstash` store
 * backend is tested against real Redis semantics:
 * - `POST /` with a JSON command array, `POST /pipeline` with an array of them, `POST /multi-exec`
 * - `Authorization: Bearer <token>` (401 otherwise)
 * - `Upstash-Encoding: base64`: every string of the result base64, except a top-level "OK"
 *   (or, with `encoding: "ignore"`, plain strings whatever the client asks, as some independent
 *   Upstash-compatible servers do)
 * - a failed command is HTTP 400 `{"error": "<redis message>"}`; results are `{"result": ...}`
 */
import { createClient } from "redis";
import { redisConnection } from "../../src/store/redis.ts";

/** A running Upstash-protocol server. */
export interface UpstashServer extends AsyncDisposable {
  url: string;
  token: string;
  /** HTTP requests answered so far. */
  requests: number;
  close(): Promise<void>;
}

type Reply = string | number | null | Reply[];

function base64(text: string): string {
  return new TextEncoder().encode(text).toBase64();
}

function encode(value: Reply, encoded: boolean, top: boolean): Reply {
  if (typeof value === "string") return !encoded || (top && value === "OK") ? value : base64(value);
  if (Array.isArray(value)) return value.map((v) => encode(v, encoded, false));
  return value ?? null;
}

function isCommand(value: unknown): value is (string | number)[] {
  return Array.isArray(value) && value.length > 0 &&
    value.every((v) => typeof v === "string" || typeof v === "number");
}

/** Options of {@link startUpstashServer}. */
export interface UpstashServerOptions {
  /** The bearer token clients must send (default `test-upstash-token`). */
  token?: string;
  /** honour (default): base64 results when the client asks; ignore: never. */
  encoding?: "honour" | "ignore";
}

/** Starts the server in front of the Redis at `redisUrl`. */
export async function startUpstashServer(
  redisUrl: string,
  options: UpstashServerOptions = {},
): Promise<UpstashServer> {
  const token = options.token ?? "test-upstash-token";
  const honour = options.encoding !== "ignore";
  // The gateway's own Redis connection: bounded commands, replaced when it stops answering.
  const connection = await redisConnection(redisUrl, { timeoutMs: 500 });
  const send = (command: (string | number)[]) =>
    connection.send(command.map(String)) as Promise<Reply>;
  // MULTI/EXEC needs a client of its own (a transaction must not interleave with other commands).
  const transactions = createClient({ url: redisUrl, RESP: 2, disableOfflineQueue: true });
  transactions.on("error", () => {});
  await transactions.connect();

  const state = { requests: 0 };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    state.requests++;
    if (req.method !== "POST") {
      return Response.json({ error: "Method not allowed" }, { status: 405 });
    }
    if (req.headers.get("authorization") !== `Bearer ${token}`) {
      return Response.json({ error: "Unauthorized" }, { status: 401 });
    }
    const encoded = honour && req.headers.get("upstash-encoding") === "base64";
    const path = new URL(req.url).pathname;
    let body: unknown;
    try {
      body = await req.json();
    } catch {
      return Response.json({ error: "ERR failed to parse command" }, { status: 400 });
    }
    if (path === "/") {
      if (!isCommand(body)) return Response.json({ error: "ERR bad command" }, { status: 400 });
      try {
        return Response.json({ result: encode(await send(body), encoded, true) });
      } catch (error) {
        const status = (error as Error).name === "ErrorReply" ? 400 : 500;
        return Response.json({ error: (error as Error).message }, { status });
      }
    }
    if (path === "/pipeline" || path === "/multi-exec") {
      if (!Array.isArray(body) || !body.every(isCommand)) {
        return Response.json({ error: "ERR bad pipeline" }, { status: 400 });
      }
      if (path === "/multi-exec") {
        const multi = transactions.multi();
        for (const command of body) multi.addCommand(command.map(String));
        try {
          const replies = await multi.exec() as unknown as Reply[];
          return Response.json(replies.map((r) => ({ result: encode(r, encoded, true) })));
        } catch (error) {
          return Response.json({ error: (error as Error).message }, { status: 400 });
        }
      }
      const results = [];
      for (const command of body) {
        try {
          results.push({ result: encode(await send(command), encoded, true) });
        } catch (error) {
          results.push({ error: (error as Error).message });
        }
      }
      return Response.json(results);
    }
    return Response.json({ error: "Not found" }, { status: 404 });
  });

  const close = async () => {
    await server.shutdown();
    await connection.close();
    // destroy, not close: a close waits for a Redis that may be down.
    transactions.destroy();
  };
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    token,
    get requests() {
      return state.requests;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
