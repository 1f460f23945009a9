import assert from "node:assert/strict";
import fc from "fast-check";
import {
  chunkedStart,
  decodeChunked,
  encodeRequest,
  framingOf,
  headEnd,
  parseHead,
} from "../../../../src/upstream/http1/wire.ts";
import { UpstreamError } from "../../../../src/upstream/exchange.ts";
import { fuzzParameters, runs } from "../../../support/fuzz.ts";

const bytes = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));
const text = (data: Uint8Array) => String.fromCharCode(...data);

/** The error `run` throws, or undefined. */
function thrown(run: () => unknown): unknown {
  try {
    run();
    return undefined;
  } catch (error) {
    return error;
  }
}

/** A header name: a token (RFC 9110 5.6.2). */
const tokenName = fc.stringMatching(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,20}$/);
/** A header value: visible characters, spaces and tabs inside, obs-text (bytes 128-255). */
const fieldValue = fc.array(
  fc.oneof(
    fc.integer({ min: 0x21, max: 0x7e }),
    fc.integer({ min: 0x80, max: 0xff }),
    fc.constantFrom(0x20, 0x09),
  ),
  { maxLength: 40 },
).map((codes) => String.fromCharCode(...codes).trim());

Deno.test("parseHead() reads back any well-formed head: status, lower-case names, trimmed values", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 100, max: 599 }),
      fc.array(fc.tuple(tokenName, fieldValue), { maxLength: 12 }),
      fc.constantFrom("\r\n", "\n"),
      (status, headers, eol) => {
        const head = `HTTP/1.1 ${status} Reason${eol}` +
          headers.map(([name, value]) => `${name}:  ${value} ${eol}`).join("") + eol;
        const parsed = parseHead(bytes(head));
        assert.equal(parsed.status, status);
        assert.equal(parsed.version, 1);
        assert.deepEqual(
          parsed.headers,
          headers.map(([name, value]) => [name.toLowerCase(), value]),
        );
      },
    ),
    fuzzParameters(runs(500), import.meta),
  );
});

Deno.test("parseHead() and framingOf() throw nothing but UpstreamError broken on arbitrary heads", () => {
  const lines = fc.array(
    fc.oneof(
      fc.string({ unit: "binary-ascii", maxLength: 30 }),
      fc.tuple(tokenName, fc.string({ unit: "binary", maxLength: 20 })).map(([n, v]) =>
        `${n}: ${v}`
      ),
      fc.constantFrom(
        "transfer-encoding: chunked",
        "content-length: 5",
        "content-length: 5, 6",
        "content-length: -1",
        "connection: close",
        " folded",
      ),
    ),
    { maxLength: 8 },
  );
  fc.assert(
    fc.property(
      fc.oneof(fc.constant("HTTP/1.1 200 OK"), fc.string({ unit: "binary", maxLength: 20 })),
      lines,
      (statusLine, headerLines) => {
        const head = bytes([statusLine, ...headerLines, "", ""].join("\r\n"));
        const error = thrown(() => framingOf(parseHead(head), "GET"));
        if (error !== undefined) {
          assert.ok(error instanceof UpstreamError, String(error));
          assert.equal(error.failure, "broken");
        }
      },
    ),
    fuzzParameters(runs(1000), import.meta),
  );
});

Deno.test("headEnd() finds the blank line with CRLF or bare LF line ends", () => {
  assert.equal(headEnd(bytes("HTTP/1.1 200 OK\r\n\r\nbody"), 0, 23), 19);
  assert.equal(headEnd(bytes("HTTP/1.1 200 OK\n\nbody"), 0, 21), 17);
  assert.equal(headEnd(bytes("HTTP/1.1 200 OK\r\nx: y\r\n"), 0, 23), -1);
});

Deno.test("framingOf() frames by Transfer-Encoding over Content-Length, by length, or by the end", () => {
  const head = (...lines: string[]) =>
    parseHead(bytes(["HTTP/1.1 200 OK", ...lines, "", ""].join("\r\n")));
  assert.deepEqual(framingOf(head("content-length: 5"), "GET"), {
    framing: { kind: "length", length: 5 },
    reusable: true,
  });
  assert.deepEqual(framingOf(head("content-length: 5", "transfer-encoding: chunked"), "GET"), {
    framing: { kind: "chunked" },
    reusable: false,
  });
  assert.deepEqual(framingOf(head(), "GET"), { framing: { kind: "close" }, reusable: false });
  assert.deepEqual(framingOf(head("content-length: 5"), "HEAD").framing, { kind: "none" });
  assert.throws(() => framingOf(head("content-length: 2", "content-length: 3"), "GET"));
});

/** A body in chunks of the given sizes, with extensions and trailers, as chunked framing. */
function chunked(body: Uint8Array, sizes: number[], trailers: string[]): Uint8Array {
  let out = "";
  let at = 0;
  for (const size of sizes) {
    if (at >= body.length) break;
    const piece = body.subarray(at, at + size);
    at += piece.length;
    out += `${piece.length.toString(16)};ext=1\r\n${text(piece)}\r\n`;
  }
  if (at < body.length) {
    out += `${(body.length - at).toString(16)}\r\n${text(body.subarray(at))}\r\n`;
  }
  return bytes(out + "0\r\n" + trailers.map((t) => `${t}\r\n`).join("") + "\r\n");
}

/** Decodes `framed` fed whole; returns the body and what is left after it. */
function decodeWhole(framed: Uint8Array) {
  const state = chunkedStart();
  const parts: number[] = [];
  const at = decodeChunked(state, framed, 0, framed.length, (data) => parts.push(...data));
  return { state, body: new Uint8Array(parts), rest: framed.length - at };
}

Deno.test("decodeChunked() decodes any chunked body, extensions and trailers dropped", () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ maxLength: 300 }),
      fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 20 }),
      fc.array(fc.constantFrom("x-trailer: t", "checksum: abc"), { maxLength: 3 }),
      (body, sizes, trailers) => {
        const framed = chunked(body, sizes, trailers);
        const decoded = decodeWhole(framed);
        assert.equal(decoded.state.stage, "done");
        assert.deepEqual(decoded.body, body);
        assert.equal(decoded.rest, 0);
      },
    ),
    fuzzParameters(runs(500), import.meta),
  );
});

Deno.test("decodeChunked() decodes any split of any chunked body, CR and LF apart included", () => {
  fc.assert(
    fc.property(
      fc.uint8Array({ maxLength: 200 }),
      fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 10 }),
      fc.array(fc.constantFrom("x-trailer: t", "checksum: abc"), { maxLength: 2 }),
      fc.array(fc.nat(), { maxLength: 30 }),
      (body, sizes, trailers, cuts) => {
        const framed = chunked(body, sizes, trailers);
        // The bytes arrive in reads ending at the cut positions, as a connection's buffer grows.
        const ends = [...new Set(cuts.map((cut) => cut % (framed.length + 1)))].sort((a, b) =>
          a - b
        );
        const state = chunkedStart();
        const parts: number[] = [];
        let at = 0;
        for (const end of [...ends, framed.length]) {
          if (end < at) continue;
          at = decodeChunked(state, framed, at, end, (data) => parts.push(...data));
        }
        assert.equal(state.stage, "done");
        assert.deepEqual(new Uint8Array(parts), body);
        assert.equal(at, framed.length);
      },
    ),
    fuzzParameters(runs(500), import.meta),
  );
  // Byte by byte, every split at once.
  const framed = chunked(bytes('{"ok":true}'), [4, 7], ["x-trailer: t"]);
  const state = chunkedStart();
  const parts: number[] = [];
  let at = 0;
  for (let end = 1; end <= framed.length; end++) {
    at = decodeChunked(state, framed, at, end, (data) => parts.push(...data));
  }
  assert.equal(state.stage, "done");
  assert.equal(text(new Uint8Array(parts)), '{"ok":true}');
});

Deno.test("decodeChunked() waits at an incomplete line and goes on with the bytes that follow", () => {
  const framed = bytes('4\r\n{"ok\r\n7\r\n":true}\r\n0\r\n\r\n');
  const state = chunkedStart();
  const parts: number[] = [];
  const take = (data: Uint8Array) => parts.push(...data);
  // The first chunk whole, then an incomplete size line "7": the position stops before it.
  let at = decodeChunked(state, framed, 0, 10, take);
  assert.equal(at, 9);
  assert.equal(state.stage, "size");
  at = decodeChunked(state, framed, at, framed.length, take);
  assert.equal(at, framed.length);
  assert.equal(state.stage, "done");
  assert.equal(text(new Uint8Array(parts)), '{"ok":true}');
});

Deno.test("decodeChunked() throws nothing but UpstreamError broken on arbitrary bytes", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 200 }), (framed) => {
      const error = thrown(() => decodeWhole(framed));
      if (error !== undefined) {
        assert.ok(error instanceof UpstreamError, String(error));
        assert.equal(error.failure, "broken");
      }
    }),
    fuzzParameters(runs(1000), import.meta),
  );
});

Deno.test("encodeRequest() frames the body itself and refuses a target that would end the line", () => {
  const request = {
    method: "POST",
    origin: "http://core",
    target: "/a?b=1",
    headers: [["content-length", "99"], ["x-a", "1"]] as [string, string][],
    body: bytes("{}"),
    timeoutMs: 1000,
    maxBytes: 1000,
  };
  assert.equal(
    text(encodeRequest(request, "core")),
    "POST /a?b=1 HTTP/1.1\r\nhost: core\r\nx-a: 1\r\ncontent-length: 2\r\n\r\n{}",
  );
  assert.throws(
    () => encodeRequest({ ...request, target: "/a b" }, "core"),
    /Unsafe request target/,
  );
  assert.throws(
    () => encodeRequest({ ...request, headers: [["x-a", "\u0100"]] }, "core"),
    /not a byte string/,
  );
});

Deno.test("parseHead() refuses every byte RFC 9110 does not allow in a header name or value", () => {
  for (let byte = 0; byte < 256; byte++) {
    const char = String.fromCharCode(byte);
    const name = thrown(() => parseHead(bytes(`HTTP/1.1 200 OK\r\nx-a${char}b: v\r\n\r\n`)));
    const nameAllowed = /^[!#$%&'*+.^_`|~0-9A-Za-z:-]$/.test(char);
    assert.equal(name === undefined, nameAllowed, `name byte ${byte}`);
    const value = thrown(() => parseHead(bytes(`HTTP/1.1 200 OK\r\nx-a: v${char}w\r\n\r\n`)));
    const valueAllowed = byte === 9 || (byte >= 32 && byte !== 127);
    assert.equal(value === undefined, valueAllowed, `value byte ${byte}`);
  }
  // Only spaces and tabs around a value are optional whitespace; a vertical tab is refused.
  assert.deepEqual(parseHead(bytes("HTTP/1.1 200 OK\r\nx-a: \t\xa0v\xa0 \r\n\r\n")).headers, [
    ["x-a", "\xa0v\xa0"],
  ]);
  assert.throws(() => parseHead(bytes("HTTP/1.1 200 OK\r\nx-a: \x0bv\r\n\r\n")));
});

Deno.test("parseHead() takes status codes 100 to 599 only", () => {
  for (const status of ["099", "600", "999"]) {
    assert.throws(() => parseHead(bytes(`HTTP/1.1 ${status} X\r\n\r\n`)), /status line/);
  }
  assert.equal(parseHead(bytes("HTTP/1.1 599 X\r\n\r\n")).status, 599);
});
