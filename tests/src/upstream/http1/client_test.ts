import assert from "node:assert/strict";
import { Http1Upstream } from "../../../../src/upstream/http1/client.ts";
import { MAX_HEAD } from "../../../../src/upstream/http1/wire.ts";
import { UpstreamError, type UpstreamRequest } from "../../../../src/upstream/mod.ts";
import { closedPort } from "../../../support/upstream.ts";
import { waitFor } from "../../../support/wait.ts";
import { createCa, issue, privateKeyPem } from "../../../support/pki.ts";
import { runTrusting } from "../../../support/trusting.ts";

/** What the scripted upstream does with one request. */
interface Reply {
  /** Bytes written back, as a byte string (code units 0-255). */
  send?: string;
  /** After sending: keep the connection, close it, or never answer more. */
  then?: "keep" | "close" | "stall";
}

/** A request as the scripted upstream read it. */
interface Seen {
  head: string;
  body: string;
  connection: number;
}

const bytes = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));
const text = (data: Uint8Array) => String.fromCharCode(...data);

/**
 * An HTTP/1.1 upstream on 127.0.0.1 that answers each request with the reply `script` gives:
 * raw bytes, so that malformed and cut answers can be sent.
 */
function scriptedUpstream(script: (seen: Seen, index: number) => Reply) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const seen: Seen[] = [];
  const open = new Set<Deno.Conn>();
  let connections = 0;
  let ended = 0;
  const serving = (async () => {
    for await (const conn of listener) {
      open.add(conn);
      const id = ++connections;
      (async () => {
        let buffer = "";
        try {
          while (true) {
            let end = buffer.indexOf("\r\n\r\n");
            while (end < 0) {
              const chunk = new Uint8Array(65536);
              const n = await conn.read(chunk);
              if (n === null) return;
              buffer += text(chunk.subarray(0, n));
              end = buffer.indexOf("\r\n\r\n");
            }
            const head = buffer.slice(0, end);
            const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0);
            while (buffer.length < end + 4 + length) {
              const chunk = new Uint8Array(65536);
              const n = await conn.read(chunk);
              if (n === null) return;
              buffer += text(chunk.subarray(0, n));
            }
            const request = { head, body: buffer.slice(end + 4, end + 4 + length), connection: id };
            buffer = buffer.slice(end + 4 + length);
            seen.push(request);
            const reply = script(request, seen.length - 1);
            if (reply.send) await conn.write(bytes(reply.send));
            if (reply.then === "close") return;
            if (reply.then === "stall") {
              await conn.read(new Uint8Array(1)).catch(() => null);
              return;
            }
          }
        } catch {
          // The client closed the connection.
        } finally {
          ended++;
          open.delete(conn);
          try {
            conn.close();
          } catch { /* closed */ }
        }
      })();
    }
  })();
  const port = (listener.addr as Deno.NetAddr).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    seen,
    get connections() {
      return connections;
    },
    get ended() {
      return ended;
    },
    async close() {
      listener.close();
      for (const conn of open) {
        try {
          conn.close();
        } catch { /* closed */ }
      }
      await serving.catch(() => {});
      // Let the connection tasks see their end.
      await new Promise((resolve) => setTimeout(resolve, 20));
    },
  };
}

const OK = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n" +
  '{"ok":true}';

function request(origin: string, extra: Partial<UpstreamRequest> = {}): UpstreamRequest {
  return {
    method: "GET",
    origin,
    target: "/psd2/v1/accounts?withBalance=true",
    headers: [["x-request-id", "id-1"]],
    timeoutMs: 2_000,
    maxBytes: 1_000,
    ...extra,
  };
}

async function failure(promise: Promise<unknown>): Promise<UpstreamError> {
  const error = await promise.then(() => undefined, (e) => e);
  assert.ok(error instanceof UpstreamError, `expected an UpstreamError, got ${error}`);
  return error;
}

async function withClient(
  script: (seen: Seen, index: number) => Reply,
  run: (client: Http1Upstream, upstream: ReturnType<typeof scriptedUpstream>) => Promise<void>,
) {
  const upstream = scriptedUpstream(script);
  // The scripted answers echo no X-Request-ID; these tests are of the connection's mechanics
  // (which connections are reused is tests/security/upstream_late_answer_test.ts).
  const client = new Http1Upstream("always");
  try {
    await run(client, upstream);
  } finally {
    client.close();
    await upstream.close();
  }
}

Deno.test("Http1Upstream.send() writes the request line, Host, headers and a framed body", async () => {
  await withClient(() => ({ send: OK }), async (client, upstream) => {
    await client.send(request(upstream.origin, {
      method: "POST",
      headers: [
        ["content-type", "application/json"],
        // The client frames the request itself: these never reach the upstream.
        ["host", "other.example"],
        ["content-length", "999"],
        ["transfer-encoding", "chunked"],
        ["x-request-id", "id-2"],
      ],
      body: bytes('{"a":1}'),
    }));
    await client.send(request(upstream.origin, { method: "DELETE" }));
    await client.send(request(upstream.origin, { method: "PUT" }));
    const [post, del, put] = upstream.seen;
    const host = new URL(upstream.origin).host;
    assert.equal(
      post.head,
      `POST /psd2/v1/accounts?withBalance=true HTTP/1.1\r\nhost: ${host}\r\n` +
        "content-type: application/json\r\nx-request-id: id-2\r\ncontent-length: 7",
    );
    assert.equal(post.body, '{"a":1}');
    assert.doesNotMatch(del.head, /content-length/);
    assert.match(put.head, /\r\ncontent-length: 0$/);
  });
});

Deno.test("Http1Upstream.send() returns status, lower-case headers in order and the body", async () => {
  const answer = "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nX-Core: a\r\n" +
    "x-core: b\r\nContent-Length: 11\r\n\r\n" + '{"ok":true}';
  await withClient(() => ({ send: answer }), async (client, upstream) => {
    const got = await client.send(request(upstream.origin));
    assert.equal(got.status, 201);
    assert.deepEqual(got.headers, [
      ["content-type", "application/json"],
      ["x-core", "a"],
      ["x-core", "b"],
      ["content-length", "11"],
    ]);
    assert.equal(new TextDecoder().decode(got.body), '{"ok":true}');
    assert.equal(got.closeDelimited, false);
  });
});

Deno.test("Http1Upstream keeps one connection alive across sequential exchanges", async () => {
  await withClient(() => ({ send: OK }), async (client, upstream) => {
    for (let i = 0; i < 5; i++) {
      assert.equal((await client.send(request(upstream.origin))).status, 200);
    }
    assert.equal(upstream.connections, 1);
    assert.equal(client.opened, 1);
  });
});

Deno.test("Http1Upstream opens a new connection when the upstream closed an idle one", async () => {
  await withClient(
    (_, i) => ({ send: OK, then: i === 0 ? "close" : "keep" }),
    async (client, upstream) => {
      // The answer does not say it closes: the idle read notices the end instead.
      await client.send(request(upstream.origin));
      await new Promise((resolve) => setTimeout(resolve, 50));
      const second = await client.send(request(upstream.origin, { method: "POST" }));
      assert.equal(second.status, 200);
      assert.equal(upstream.connections, 2);
    },
  );
});

Deno.test("Http1Upstream does not reuse a connection the answer closes or frames by its end", async () => {
  const close = OK.replace("\r\n\r\n", "\r\nconnection: close\r\n\r\n");
  const byEnd = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n" + '{"ok":true}';
  const http10 = OK.replace("HTTP/1.1", "HTTP/1.0");
  const replies: Reply[] = [
    { send: close },
    { send: byEnd, then: "close" },
    { send: http10 },
    { send: OK },
  ];
  await withClient((_, i) => replies[i], async (client, upstream) => {
    await client.send(request(upstream.origin));
    const delimited = await client.send(request(upstream.origin));
    assert.equal(delimited.closeDelimited, true);
    assert.equal(new TextDecoder().decode(delimited.body), '{"ok":true}');
    await client.send(request(upstream.origin));
    await client.send(request(upstream.origin));
    assert.equal(upstream.connections, 4);
  });
});

Deno.test("Http1Upstream decodes a chunked answer, drops its trailers and reuses the connection", async () => {
  const chunked = "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n" +
    '4;ext=1\r\n{"ok\r\n7\r\n":true}\r\n0\r\nx-trailer: t\r\n\r\n';
  await withClient(() => ({ send: chunked }), async (client, upstream) => {
    const first = await client.send(request(upstream.origin));
    assert.equal(new TextDecoder().decode(first.body), '{"ok":true}');
    assert.ok(!first.headers.some(([name]) => name === "x-trailer"));
    await client.send(request(upstream.origin));
    assert.equal(upstream.connections, 1);
  });
});

Deno.test("Http1Upstream lets Transfer-Encoding win over Content-Length and closes that connection", async () => {
  const both = "HTTP/1.1 200 OK\r\ncontent-length: 100\r\ntransfer-encoding: chunked\r\n\r\n" +
    "2\r\nok\r\n0\r\n\r\n";
  await withClient(() => ({ send: both }), async (client, upstream) => {
    const got = await client.send(request(upstream.origin));
    assert.equal(new TextDecoder().decode(got.body), "ok");
    await client.send(request(upstream.origin));
    assert.equal(upstream.connections, 2);
  });
});

Deno.test("Http1Upstream skips interim answers and reads no body for 204 and 304", async () => {
  const replies: Reply[] = [
    { send: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n" + OK },
    { send: "HTTP/1.1 204 No Content\r\n\r\n" },
    { send: "HTTP/1.1 304 Not Modified\r\ncontent-length: 50\r\n\r\n" },
    { send: OK },
  ];
  await withClient((_, i) => replies[i], async (client, upstream) => {
    assert.equal((await client.send(request(upstream.origin))).status, 200);
    assert.equal((await client.send(request(upstream.origin))).body.byteLength, 0);
    assert.equal((await client.send(request(upstream.origin))).status, 304);
    assert.equal((await client.send(request(upstream.origin))).status, 200);
    assert.equal(upstream.connections, 1);
  });
});

Deno.test("Http1Upstream carries header bytes 128-255 unchanged both ways", async () => {
  const answer = "HTTP/1.1 200 OK\r\nx-name: M\xfcller \xa1\r\ncontent-length: 0\r\n\r\n";
  await withClient(() => ({ send: answer }), async (client, upstream) => {
    const got = await client.send(
      request(upstream.origin, { headers: [["psu-id", "\xc3\xa4\xa1"]] }),
    );
    assert.match(upstream.seen[0].head, /\r\npsu-id: \xc3\xa4\xa1$/);
    assert.deepEqual(got.headers[0], ["x-name", "M\xfcller \xa1"]);
  });
});

Deno.test("Http1Upstream refuses malformed answers as broken", async () => {
  const malformed = [
    "HTTP/2 200 OK\r\ncontent-length: 0\r\n\r\n",
    "HTTP/1.1 20 OK\r\ncontent-length: 0\r\n\r\n",
    "HTTP/1.1 200 OK\r\nno colon here\r\ncontent-length: 0\r\n\r\n",
    "HTTP/1.1 200 OK\r\nbad name: x\r\ncontent-length: 0\r\n\r\n",
    "HTTP/1.1 200 OK\r\nx-a: 1\r\n folded\r\ncontent-length: 0\r\n\r\n",
    "HTTP/1.1 200 OK\r\nx-a: 1\r2\r\ncontent-length: 0\r\n\r\n",
    "HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\nabc",
    "HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n",
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n",
    "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nokX\r\n0\r\n\r\n",
    "HTTP/1.1 101 Switching Protocols\r\n\r\n",
  ];
  for (const answer of malformed) {
    await withClient(() => ({ send: answer, then: "close" }), async (client, upstream) => {
      const error = await failure(client.send(request(upstream.origin)));
      assert.equal(error.failure, "broken", JSON.stringify(answer));
      assert.match(error.message, /malformed/);
    });
  }
});

Deno.test("Http1Upstream refuses a header section over 64 KiB", async () => {
  const huge = "HTTP/1.1 200 OK\r\nx-big: " + "a".repeat(70_000) + "\r\ncontent-length: 0\r\n\r\n";
  await withClient(() => ({ send: huge }), async (client, upstream) => {
    assert.equal((await failure(client.send(request(upstream.origin)))).failure, "broken");
  });
});

Deno.test("Http1Upstream tells a cut before the head (reset) from a cut in the body (broken)", async () => {
  const cases: [string, "reset" | "broken"][] = [
    ["", "reset"],
    ["HTTP/1.1 200 OK\r\ncontent-le", "reset"],
    ['HTTP/1.1 200 OK\r\ncontent-length: 20\r\n\r\n{"ok"', "broken"],
    ['HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\n{"ok"', "broken"],
  ];
  for (const [send, kind] of cases) {
    await withClient(() => ({ send, then: "close" }), async (client, upstream) => {
      const error = await failure(client.send(request(upstream.origin)));
      assert.equal(error.failure, kind, JSON.stringify(send));
    });
  }
});

Deno.test("Http1Upstream stops at maxBytes without waiting for the rest", async () => {
  const declared = "HTTP/1.1 200 OK\r\ncontent-length: 5000\r\n\r\n";
  const chunked = "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n" +
    "200\r\n" + "a".repeat(512) + "\r\n".repeat(1) + "400\r\n" + "b".repeat(1024) + "\r\n";
  const byEnd = "HTTP/1.1 200 OK\r\n\r\n" + "c".repeat(1500);
  for (const send of [declared, chunked, byEnd]) {
    // The upstream never ends the body: a client that waited for the rest would fail at its
    // deadline ("timeout"), only the limit ends the exchange as "too_large".
    await withClient(() => ({ send, then: "stall" }), async (client, upstream) => {
      const error = await failure(client.send(request(upstream.origin, { timeoutMs: 5_000 })));
      assert.equal(error.failure, "too_large");
    });
  }
});

Deno.test("Http1Upstream fails a stalled exchange at its deadline and closes the connection", async () => {
  const stalls: Reply[] = [
    { then: "stall" },
    { send: "HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc", then: "stall" },
  ];
  for (const reply of stalls) {
    await withClient(() => reply, async (client, upstream) => {
      const started = performance.now();
      const error = await failure(client.send(request(upstream.origin, { timeoutMs: 200 })));
      assert.equal(error.failure, "timeout");
      assert.ok(performance.now() - started >= 200, "not before the deadline");
      assert.ok(await waitFor(() => upstream.ended === 1), "the gateway closed the connection");
    });
  }
});

Deno.test("Http1Upstream reports a refused connection as refused", async () => {
  const client = new Http1Upstream();
  const error = await failure(client.send(request(`http://127.0.0.1:${closedPort()}`)));
  assert.equal(error.failure, "refused");
  client.close();
});

Deno.test("Http1Upstream.close() closes its idle connections", async () => {
  await withClient(() => ({ send: OK }), async (client, upstream) => {
    await client.send(request(upstream.origin));
    assert.equal(upstream.ended, 0);
    client.close();
    assert.ok(await waitFor(() => upstream.ended === 1), "the idle connection closed");
  });
});

Deno.test("Http1Upstream refuses a request target that would end the request line", async () => {
  const client = new Http1Upstream();
  await assert.rejects(
    client.send(request("http://127.0.0.1:9", { target: "/a b\r\nx: y" })),
    /Unsafe request target/,
  );
  client.close();
});

Deno.test("Http1Upstream speaks TLS to an https origin the runtime trusts (DENO_CERT)", async () => {
  const ca = await createCa("Test core CA");
  const server = await issue(ca, { domains: ["localhost"], orgId: null });
  const keyPem = await privateKeyPem(server);
  const core = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert: server.pem, key: keyPem, onListen: () => {} },
    (request) => Response.json({ path: new URL(request.url).pathname }),
  );
  try {
    // The runtime's trust store is read at start-up: a child process with the core's CA in it.
    const module = new URL("../../../../src/upstream/http1/client.ts", import.meta.url);
    const printed = await runTrusting(
      ca.pem,
      `import { Http1Upstream } from "${module}";
      const client = new Http1Upstream();
      const answer = await client.send({ method: "GET", origin: "https://localhost:${core.addr.port}",
        target: "/psd2/v1/x", headers: [], timeoutMs: 5000, maxBytes: 1000 });
      console.log(answer.status, new TextDecoder().decode(answer.body));
      client.close();`,
    );
    assert.equal(printed, '200 {"path":"/psd2/v1/x"}');
    // Without that CA the certificate is refused: the exchange never reaches the core.
    const client = new Http1Upstream();
    const error = await failure(client.send(request(`https://localhost:${core.addr.port}`)));
    assert.equal(error.failure, "refused");
    client.close();
  } finally {
    await core.shutdown();
  }
});

/** An answer of `size` body bytes in each framing: Content-Length, chunked, the connection's end. */
function framings(size: number): string[] {
  const body = "a".repeat(size);
  return [
    `HTTP/1.1 200 OK\r\ncontent-length: ${size}\r\n\r\n${body}`,
    `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${
      size.toString(16)
    }\r\n${body}\r\n0\r\n\r\n`,
    `HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n${body}`,
  ];
}

Deno.test("Http1Upstream passes an answer of exactly maxBytes and refuses one byte more, in every framing", async () => {
  for (const send of framings(1_000)) {
    await withClient(() => ({ send, then: "close" }), async (client, upstream) => {
      const answer = await client.send(request(upstream.origin, { maxBytes: 1_000 }));
      assert.equal(answer.body.byteLength, 1_000, send.slice(0, 60));
    });
  }
  for (const send of framings(1_001)) {
    await withClient(() => ({ send, then: "close" }), async (client, upstream) => {
      const error = await failure(client.send(request(upstream.origin, { maxBytes: 1_000 })));
      assert.equal(error.failure, "too_large", send.slice(0, 60));
    });
  }
});

Deno.test("Http1Upstream reads a header section of exactly 64 KiB and refuses one byte more", async () => {
  const head = (size: number) => {
    const start = "HTTP/1.1 200 OK\r\ncontent-length: 0\r\nx-pad: ";
    return start + "p".repeat(size - start.length - 4) + "\r\n\r\n";
  };
  assert.equal(head(MAX_HEAD).length, MAX_HEAD);
  await withClient(() => ({ send: head(MAX_HEAD) }), async (client, upstream) => {
    assert.equal((await client.send(request(upstream.origin))).status, 200);
  });
  await withClient(() => ({ send: head(MAX_HEAD + 1) }), async (client, upstream) => {
    const error = await failure(client.send(request(upstream.origin)));
    assert.equal(error.failure, "broken");
    assert.match(error.message, /header section too large/);
  });
});
