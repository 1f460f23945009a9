/**
 * Issue 35.8: a late extra answer of a core that does not echo X-Request-ID reached the next
 * request on a reused connection, with either upstream client. The bytes arrive as the next
 * request is written (or just before, still unseen by the idle read), where no timing tells them
 * from its answer; only the echo does. Under `upstream.reuse: echoed` (the default) a connection
 * is reused only after an answer that echoed the request's X-Request-ID, and an answer on a reused
 * connection must echo it: a core that never echoes gets a connection per exchange.
 */
import assert from "node:assert/strict";
import { Http1Upstream } from "../../src/upstream/http1/client.ts";
import type { UpstreamRequest } from "../../src/upstream/exchange.ts";
import { rawAnswer, startFaultyUpstream } from "../support/faulty_upstream.ts";
import { startGateway } from "../support/gateway.ts";
import { buildPolicy } from "../support/policies.ts";

type Client = "http1" | "fetch";
const CLIENTS: Client[] = ["http1", "fetch"];

function policy(client: Client, reuse?: "echoed" | "always" | "never") {
  return buildPolicy({ upstream: { url: "${UPSTREAM_URL}", client, ...(reuse && { reuse }) } });
}

function read(gateway: { fetch(path: string, init?: RequestInit): Promise<Response> }, id: string) {
  return gateway.fetch("/v1/consents/c-1/status", { headers: { "x-request-id": id } });
}

/** An answer for `id` in its body; its head echoes the id when `echo` says so. */
function own(id: string, echo: boolean, extra: Record<string, unknown> = {}): string {
  const headers = ["content-type: application/json", ...(echo ? [`x-request-id: ${id}`] : [])];
  return rawAnswer(200, headers, JSON.stringify({ for: id, ...extra }));
}

/**
 * A core that, for a request on a connection that carried one before, first writes a second
 * answer to that earlier request (without an echo, as a core's error page would come) and then
 * the request's own: the late answer arrives just after the next request was written, whatever
 * the load.
 */
function lateAnswering(echo: boolean) {
  const firstOn = new Map<number, string>();
  return startFaultyUpstream((request) => {
    const id = request.headers.get("x-request-id")!;
    const earlier = firstOn.get(request.connection);
    if (earlier === undefined) {
      firstOn.set(request.connection, id);
      return { kind: "raw", parts: [{ bytes: own(id, echo) }] };
    }
    return {
      kind: "raw",
      parts: [
        { bytes: own(earlier, false, { secret: "the first request's" }) },
        { bytes: own(id, echo), delayMs: 50 },
      ],
    };
  });
}

for (const client of CLIENTS) {
  Deno.test(`upstream (${client}): a core that does not echo X-Request-ID never gives its late answer to the next request`, async () => {
    await using core = lateAnswering(false);
    await using gateway = await startGateway({ policy: policy(client), upstream: core.url });
    const ids = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    for (const id of ids) {
      const response = await read(gateway, id);
      const text = await response.text();
      assert.doesNotMatch(text, /the first request's/, client);
      assert.deepEqual(JSON.parse(text), { for: id }, client);
    }
    assert.equal(new Set(core.requests.map((r) => r.connection)).size, 3, "one connection each");
  });

  Deno.test(`upstream (${client}): an echoing core's late answer without the echo is refused on a reused connection`, async () => {
    await using core = lateAnswering(true);
    await using gateway = await startGateway({ policy: policy(client), upstream: core.url });
    const first = crypto.randomUUID();
    assert.deepEqual(await (await read(gateway, first)).json(), { for: first });
    // The next request goes on the kept connection; what comes first is the late answer.
    const next = crypto.randomUUID();
    const second = await read(gateway, next);
    const text = await second.text();
    assert.doesNotMatch(text, /the first request's/, client);
    if (client === "http1" || core.requests[1].connection === core.requests[0].connection) {
      assert.equal(core.requests[1].connection, core.requests[0].connection, "reused");
      assert.equal(second.status, 503, client);
      assert.equal(JSON.parse(text).tppMessages[0].code, "UPSTREAM_UNAVAILABLE");
    } else {
      // fetch's pool (hyper's) may open another connection when the next request comes before
      // the first one is back in the pool: there the answer is the request's own.
      assert.deepEqual(JSON.parse(text), { for: next });
    }
    const third = crypto.randomUUID();
    assert.deepEqual(await (await read(gateway, third)).json(), { for: third }, client);
  });

  Deno.test(`upstream (${client}): an echoing core keeps its connection; reuse: never opens one per exchange`, async () => {
    for (const [reuse, connections] of [["echoed", 1], ["never", 3]] as const) {
      await using core = startFaultyUpstream((request) => ({
        kind: "raw",
        parts: [{ bytes: own(request.headers.get("x-request-id")!, true) }],
      }));
      await using gateway = await startGateway({
        policy: policy(client, reuse),
        upstream: core.url,
      });
      for (let i = 0; i < 3; i++) {
        const id = crypto.randomUUID();
        assert.deepEqual(await (await read(gateway, id)).json(), { for: id });
      }
      const used = new Set(core.requests.map((r) => r.connection)).size;
      if (client === "fetch" && reuse === "echoed") {
        // hyper's pool may open a second one when a request comes before the first is back.
        assert.ok(used < 3, `${client} ${reuse}: ${used} connections`);
      } else assert.equal(used, connections, `${client} ${reuse}`);
    }
  });
}

/** A GET of the HTTP/1.1 client with an X-Request-ID. */
function request(origin: string, id: string): UpstreamRequest {
  return {
    method: "GET",
    origin,
    target: "/psd2/v1/consents/c-1/status",
    headers: [["x-request-id", id]],
    timeoutMs: 2000,
    maxBytes: 65_536,
  };
}

/**
 * A core on a raw socket that answers each request without an echo and, after the first answer,
 * writes a second one for it; `strayWritten` resolves as that write completes.
 */
function strayAfterFirst() {
  const encoder = new TextEncoder();
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let resolveStray!: () => void;
  const strayWritten = new Promise<void>((resolve) => resolveStray = resolve);
  const connections: Deno.Conn[] = [];
  const serving = (async () => {
    for await (const conn of listener) {
      connections.push(conn);
      (async () => {
        const buffer = new Uint8Array(65_536);
        for (let n = 0;; n++) {
          const size = await conn.read(buffer).catch(() => null);
          if (size === null) return;
          const head = new TextDecoder().decode(buffer.subarray(0, size));
          const id = /x-request-id: (\S+)/.exec(head)![1];
          await conn.write(encoder.encode(own(id, false)));
          if (n === 0) {
            await new Promise((resolve) => setTimeout(resolve, 20));
            await conn.write(encoder.encode(own(id, false, { secret: "the first request's" })));
            resolveStray();
          }
        }
      })().catch(() => {});
    }
  })().catch(() => {});
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    strayWritten,
    async [Symbol.asyncDispose]() {
      listener.close();
      for (const conn of connections) {
        try {
          conn.close();
        } catch {
          // Closed by the client.
        }
      }
      await serving;
    },
  };
}

Deno.test("Http1Upstream: bytes in the socket before the next request was written, unseen by the idle read, are never its answer", async () => {
  await using core = strayAfterFirst();
  const client = new Http1Upstream();
  try {
    const first = await client.send(request(core.url, "first"));
    assert.equal(first.status, 200);
    // The next exchange starts as the late answer's write completes: it is in the gateway's
    // socket, and the idle read is told one turn of the event loop later.
    await core.strayWritten;
    const second = await client.send(request(core.url, "second"));
    const text = new TextDecoder().decode(second.body);
    assert.doesNotMatch(text, /the first request's/);
    assert.deepEqual(JSON.parse(text), { for: "second" });
  } finally {
    client.close();
  }
});
