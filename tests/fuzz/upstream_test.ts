/**
 * The core's side, fuzzed: arbitrary answer heads (status lines, header names and values of any
 * byte, X-Request-ID echoes), framings (Content-Length right, wrong or twice, chunked with
 * extensions, trailers and bad sizes, both, by the connection's end), answers split across writes
 * at arbitrary points, and stray answers written late on the connection, through both upstream
 * clients. Whatever the core sends, the process never crashes (the gateway runs in this process),
 * no answer reaches a request it was not for, and every answer is one of the documented outcomes:
 * the core's own status passed on, or 503 UPSTREAM_UNAVAILABLE / UPSTREAM_TIMEOUT.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { type RawPart, startFaultyUpstream } from "../support/faulty_upstream.ts";
import { startGateway } from "../support/gateway.ts";
import { fuzzParameters, runs } from "../support/fuzz.ts";
import { buildPolicy } from "../support/policies.ts";

/** An answer to generate, as a function of the X-Request-ID it answers (and the one before). */
interface Plan {
  /** The status the answer's status line names, when it names one the gateway could pass on. */
  status?: number;
  render(id: string, previous: string | undefined): { parts: RawPart[]; then: "keep" | "close" };
  label: string;
}

/** Picks one of the values, each as often as its weight says. */
function weighted<T>(choices: readonly (readonly [T, number])[]): fc.Arbitrary<T> {
  return fc.oneof(...choices.map(([value, weight]) => ({ weight, arbitrary: fc.constant(value) })));
}

/** `arbitrary` once in `rarity` runs, else `null`. */
function rarely<T>(arbitrary: fc.Arbitrary<T>, rarity: number): fc.Arbitrary<T | null> {
  return fc.oneof({ weight: rarity - 1, arbitrary: fc.constant(null) }, { weight: 1, arbitrary });
}

/** Any byte, as a code unit 0-255. */
const BYTE = fc.integer({ min: 0, max: 255 }).map((byte) => String.fromCharCode(byte));
const TOKEN = fc.stringMatching(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,12}$/);
/** A header value: mostly visible characters, sometimes any bytes, or one odd byte inside. */
const VALUE = fc.oneof(
  { weight: 30, arbitrary: fc.stringMatching(/^[ -~]{0,20}$/) },
  { weight: 1, arbitrary: fc.string({ unit: BYTE, maxLength: 8 }) },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.stringMatching(/^[a-z]{0,4}$/), BYTE).map(([text, byte]) =>
      text + byte + text
    ),
  },
);
const STATUS = fc.oneof(
  {
    weight: 10,
    // 101: a protocol switch, refused (it came up once in 14,000 runs when only drawn at random);
    // 503: the core's own, passed on, against the gateway's.
    arbitrary: fc.constantFrom(101, 200, 201, 202, 204, 205, 304, 400, 404, 429, 500, 502, 503),
  },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 1200 }) },
);

/** What the answer says about its X-Request-ID. */
const ECHO = weighted(
  [
    ["none", 4],
    ["own", 3],
    ["own upper case", 2],
    ["previous", 1],
    ["twice", 1],
  ] as const,
);

const FRAMING = weighted(
  [
    ["length", 6],
    ["chunked", 6],
    ["close", 3],
    ["length short", 1],
    ["length long", 1],
    ["length twice", 1],
    ["chunked bad size", 1],
    ["chunked and length", 1],
  ] as const,
);

const STATUS_LINE = fc.oneof(
  {
    weight: 16,
    arbitrary: fc.constantFrom("HTTP/1.1 {s} Reason", "HTTP/1.1 {s}", "HTTP/1.0 {s} OK"),
  },
  { weight: 1, arbitrary: fc.constantFrom("HTTP/2 {s} OK", "HTTP/1.1  {s} OK", "{s} OK", "") },
);

/** Chunked framing of `body` in pieces of the given sizes, with an extension and trailers. */
function chunked(body: string, sizes: number[], trailers: boolean, badSize: boolean): string {
  let out = "";
  let at = 0;
  for (const size of sizes) {
    if (at >= body.length) break;
    const piece = body.slice(at, at + size);
    at += piece.length;
    out += `${piece.length.toString(16)};x=1\r\n${piece}\r\n`;
  }
  if (at < body.length) out += `${(body.length - at).toString(16)}\r\n${body.slice(at)}\r\n`;
  if (badSize) out = "zz\r\n" + out;
  return out + "0\r\n" + (trailers ? "x-trailer: t\r\n" : "") + "\r\n";
}

/** Cuts `text` at the given fractions of its length into timed writes. */
function split(text: string, cuts: number[], delays: number[]): RawPart[] {
  const points = [...new Set(cuts.map((cut) => Math.floor(cut * text.length)))]
    .filter((point) => point > 0 && point < text.length).sort((a, b) => a - b);
  const parts: RawPart[] = [];
  let at = 0;
  for (const [i, point] of [...points, text.length].entries()) {
    parts.push({ bytes: text.slice(at, point), delayMs: delays[i % Math.max(1, delays.length)] });
    at = point;
  }
  return parts;
}

const plan: fc.Arbitrary<Plan> = fc.record({
  status: STATUS,
  statusLine: STATUS_LINE,
  headers: fc.array(fc.tuple(TOKEN, VALUE), { maxLength: 4 }),
  oddLine: rarely(fc.string({ unit: BYTE, maxLength: 12 }), 20),
  echo: ECHO,
  framing: FRAMING,
  sizes: fc.array(fc.integer({ min: 1, max: 20 }), { maxLength: 6 }),
  trailers: fc.boolean(),
  lineEnd: fc.constantFrom("\r\n", "\r\n", "\r\n", "\n"),
  cuts: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 }),
  delays: fc.array(fc.constantFrom(0, 0, 1, 3), { maxLength: 3 }),
  stray: rarely(fc.constantFrom(5, 30), 10),
}).map((p): Plan => {
  const wellFormedLine = p.statusLine === "HTTP/1.1 {s} Reason" ||
    p.statusLine === "HTTP/1.1 {s}" ||
    p.statusLine === "HTTP/1.0 {s} OK";
  const passable = wellFormedLine && p.status >= 200 && p.status <= 599;
  return {
    status: passable ? p.status : undefined,
    label: JSON.stringify(p),
    render(id, previous) {
      const echoed = {
        none: [],
        own: [id],
        "own upper case": [id.toUpperCase()],
        previous: [previous ?? crypto.randomUUID()],
        twice: [id, id],
      }[p.echo];
      const body = JSON.stringify({ for: id, filler: "x".repeat(p.sizes.length * 3) });
      const lines = [
        p.statusLine.replace("{s}", String(p.status).padStart(3, "0")),
        "content-type: application/json",
        ...echoed.map((value) => `x-request-id: ${value}`),
        ...p.headers.map(([name, value]) => `${name}: ${value}`),
        ...(p.oddLine === null ? [] : [p.oddLine]),
      ];
      let content = body;
      const framing = p.framing;
      if (framing.startsWith("length")) {
        const length = body.length + (framing === "length short" ? -3 : 0) +
          (framing === "length long" ? 7 : 0);
        lines.push(`content-length: ${length}`);
        if (framing === "length twice") lines.push(`content-length: ${length + 1}`);
      } else if (framing.startsWith("chunked")) {
        lines.push("transfer-encoding: chunked");
        if (framing === "chunked and length") lines.push(`content-length: ${body.length}`);
        content = chunked(body, p.sizes, p.trailers, framing === "chunked bad size");
      } else lines.push("connection: close");
      const answer = lines.join(p.lineEnd) + p.lineEnd + p.lineEnd + content;
      const parts = split(answer, p.cuts, p.delays);
      if (p.stray !== null) {
        // A second answer for the same request, written while the connection idles.
        const stray = JSON.stringify({ for: id, stray: true });
        parts.push({
          bytes:
            `HTTP/1.1 200 OK\r\nx-request-id: ${id}\r\ncontent-length: ${stray.length}\r\n\r\n${stray}`,
          delayMs: p.stray,
        });
      }
      return { parts, then: framing === "close" ? "close" : "keep" };
    },
  };
});

/** The request ids named by `"for"` members in an answer's text. */
function namedIds(text: string): string[] {
  return [...text.matchAll(/"for":"([^"]+)"/g)].map((match) => match[1]);
}

for (const client of ["http1", "fetch"] as const) {
  Deno.test(`gateway (${client}) maps any answer of the core to a documented outcome, for its own request only`, async () => {
    let generated: Plan | undefined;
    let previous: string | undefined;
    await using core = startFaultyUpstream((request) => {
      const id = request.headers.get("x-request-id")!;
      const rendered = generated!.render(id, previous);
      previous = id;
      return { kind: "raw", ...rendered };
    });
    await using gateway = await startGateway({
      policy: buildPolicy({
        upstream: { url: "${UPSTREAM_URL}", client },
        defaults: { proxy: { timeout: "400ms" } },
      }),
      upstream: core.url,
    });
    await fc.assert(
      fc.asyncProperty(plan, async (answer) => {
        generated = answer;
        const id = crypto.randomUUID();
        const response = await gateway.fetch("/v1/consents/c-1/status", {
          headers: { "x-request-id": id },
        });
        const text = await response.text();
        const where = `${client} ${response.status} ${text.slice(0, 200)}\n${answer.label}`;
        assert.equal(response.headers.get("x-request-id"), id, where);
        // The gateway's own 503 says why in tppMessages (a failed exchange, or the core's 502,
        // 503 or 504 under proxy.core_errors: replace); the core's other 5xx become the gateway's
        // 500 INTERNAL_ERROR; any other status of the core is passed on (its bodies never have
        // tppMessages).
        const own = text.includes('"tppMessages"') ? JSON.parse(text).tppMessages?.[0]?.code : "";
        if (response.status === 503 && own) {
          assert.ok(own === "UPSTREAM_UNAVAILABLE" || own === "UPSTREAM_TIMEOUT", where);
        } else if (
          response.status === 500 && (answer.status ?? 0) >= 500 && (answer.status ?? 0) <= 599
        ) {
          assert.equal(own, "INTERNAL_ERROR", where);
        } else {
          assert.equal(response.status, answer.status, `not the core's status: ${where}`);
        }
        // Whatever passed was written for this request: never another request's answer.
        for (const named of namedIds(text)) assert.equal(named, id, where);
      }),
      fuzzParameters(runs(60), import.meta),
    );
  });
}
