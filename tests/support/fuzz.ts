/**
 * The fuzzing rig: the real gateway with the default policy in front of a recording upstream
 * that answers every operation plausibly with its success status, a raw HTTP/1.1 client that
 * sends generated requests byte for byte (no client normalises the target, the header bytes or
 * the body), and the properties every answer must have.
 */
import assert from "node:assert/strict";
import { relative } from "node:path";
import fc from "fast-check";
import { DEFAULT_POLICY, startGateway, type TestGateway } from "./gateway.ts";
import { type Recorded, startUpstream, type TestUpstream } from "./upstream.ts";
import { bytesOf, dayFromToday, FRESH_ID, type FuzzRequest, upstreamRoute } from "./arbitraries.ts";
import { DISPLAY_NAMES } from "./mutations.ts";
import type { Operation } from "../../src/psd2/catalogue.ts";
import { CODES, type ErrorStatus } from "../../src/psd2/errors.ts";
import { UUID } from "../../src/lib/ids.ts";

/** Runs per property: `FUZZ_RUNS` when set (deno task fuzz), else the bounded default. */
export function runs(fallback: number): number {
  const set = Number(Deno.env.get("FUZZ_RUNS"));
  return Number.isInteger(set) && set > 0 ? set : fallback;
}

/**
 * The seed of this test file's run: `FUZZ_SEED` when set (a replay), else a fresh one. Every
 * property of the file uses it, so one seed replays the whole file.
 */
export const FUZZ_SEED: number = (() => {
  const set = Deno.env.get("FUZZ_SEED");
  if (set !== undefined && set !== "") {
    const seed = Number(set);
    if (!Number.isInteger(seed)) throw new Error(`FUZZ_SEED must be an integer, got "${set}"`);
    return seed;
  }
  // As fast-check picks one: any 32-bit integer.
  return (Date.now() ^ (Math.random() * 0x100000000)) | 0;
})();

let announced = false;

/**
 * fast-check parameters of every fuzz property; the first call of a test file prints the seed
 * and the command that replays the file (`meta`: the test file's `import.meta`).
 */
export function fuzzParameters(numRuns: number, meta: ImportMeta): fc.Parameters<unknown> {
  if (!announced) {
    announced = true;
    const file = meta.filename ? relative(Deno.cwd(), meta.filename) : meta.url;
    const runs = Deno.env.get("FUZZ_RUNS") ? `FUZZ_RUNS=${Deno.env.get("FUZZ_RUNS")} ` : "";
    console.log(
      `fuzz seed ${FUZZ_SEED}: ${runs}FUZZ_SEED=${FUZZ_SEED} deno test --allow-all ${file} replays it`,
    );
  }
  return {
    numRuns,
    seed: FUZZ_SEED,
    endOnFailure: Deno.env.get("FUZZ_SHRINK") === "false",
  };
}

/** Longest an answer may take (the upstream answers at once; the proxy's deadline is 10 s). */
export const ANSWER_MS = 20_000;

/** An answer as it came over the wire. */
export interface Answer {
  status: number;
  headers: Headers;
  body: Uint8Array;
}

const decoder = new TextDecoder();

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

function dechunk(bytes: Uint8Array): Uint8Array {
  const chunks: Uint8Array[] = [];
  let at = 0;
  while (at < bytes.length) {
    let end = at;
    while (end < bytes.length - 1 && !(bytes[end] === 13 && bytes[end + 1] === 10)) end++;
    const size = parseInt(decoder.decode(bytes.subarray(at, end)).split(";")[0], 16);
    if (!(size > 0)) break;
    chunks.push(bytes.subarray(end + 2, end + 2 + size));
    at = end + 2 + size + 2;
  }
  return concat(chunks);
}

/** Parses a whole HTTP/1.1 response (the connection was closed after it). */
export function parseResponse(bytes: Uint8Array): Answer {
  let split = -1;
  for (let i = 0; i + 3 < bytes.length; i++) {
    if (bytes[i] === 13 && bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10) {
      split = i;
      break;
    }
  }
  if (split < 0) throw new Error(`Incomplete answer: ${JSON.stringify(decoder.decode(bytes))}`);
  // Header bytes as Latin-1: one character per byte, as the gateway wrote them.
  const head = String.fromCharCode(...bytes.subarray(0, split));
  const [statusLine, ...lines] = head.split("\r\n");
  const headers = new Headers();
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  let body = bytes.subarray(split + 4);
  if (headers.get("transfer-encoding")?.includes("chunked")) body = dechunk(body);
  else if (headers.has("content-length")) {
    body = body.subarray(0, Number(headers.get("content-length")));
  }
  return { status: Number(statusLine.split(" ")[1]), headers, body };
}

/**
 * Sends one request over a fresh connection exactly as given and reads the answer; throws when
 * no answer arrives within `timeoutMs` (AbortSignal.timeout).
 */
export async function sendRaw(
  port: number,
  request: {
    method: string;
    target: string;
    headers: [string, string][];
    body?: string;
    chunks?: number[];
    truncateAt?: number;
  },
  timeoutMs = ANSWER_MS,
): Promise<Answer> {
  const signal = AbortSignal.timeout(timeoutMs);
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const abort = () => {
    try {
      conn.close();
    } catch {
      // already closed
    }
  };
  signal.addEventListener("abort", abort);
  let head = `${request.method} ${request.target} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n`;
  for (const [name, value] of request.headers) head += `${name}: ${value}\r\n`;
  let body = request.body ?? "";
  if (request.body !== undefined && request.chunks) {
    head += "transfer-encoding: chunked\r\n";
    let framed = "";
    for (let at = 0, i = 0; at < body.length; i++) {
      const piece = body.slice(at, at + request.chunks[i % request.chunks.length]);
      framed += `${piece.length.toString(16)}\r\n${piece}\r\n`;
      at += piece.length;
    }
    body = framed + "0\r\n\r\n";
  } else if (request.body !== undefined) head += `content-length: ${body.length}\r\n`;
  head += "connection: close\r\n\r\n";
  if (request.truncateAt !== undefined) body = body.slice(0, request.truncateAt);
  const bytes = concat([bytesOf(head), bytesOf(body)]);
  // Written alongside reading: the gateway may answer (413) before it has read the body.
  const writing = (async () => {
    let at = 0;
    while (at < bytes.length) at += await conn.write(bytes.subarray(at));
    if (request.truncateAt !== undefined) await conn.closeWrite();
  })().catch(() => {});
  const chunks: Uint8Array[] = [];
  const buffer = new Uint8Array(65536);
  try {
    while (true) {
      const n = await conn.read(buffer);
      if (n === null) break;
      chunks.push(buffer.slice(0, n));
    }
  } catch (error) {
    if (signal.aborted) {
      throw new Error(`No answer within ${timeoutMs} ms to ${request.method} ${request.target}`);
    }
    // A reset after the answer arrived (the gateway closed without reading the whole body).
    if (chunks.length === 0) throw error;
  } finally {
    signal.removeEventListener("abort", abort);
    abort();
  }
  await writing;
  if (signal.aborted && chunks.length === 0) {
    throw new Error(`No answer within ${timeoutMs} ms to ${request.method} ${request.target}`);
  }
  return parseResponse(concat(chunks));
}

// ---------------------------------------------------------------------------------------------
// The upstream: every operation answered plausibly, with its (first) success status.

function links(path: string, names: string[]): Record<string, { href: string }> {
  return Object.fromEntries(names.map((name) => [name, { href: `${path}/${name}` }]));
}

/** A plausible answer of the core for an operation (Berlin Group shapes, legacy links). */
export function plausibleAnswer(op: Operation, path: string, params: Record<string, string>) {
  const status = op.success[0];
  const self = path.split("?")[0];
  const id = crypto.randomUUID();
  const bodies: Record<string, unknown> = {
    initiatePayment: {
      transactionStatus: "RCVD",
      paymentId: id,
      _links: {
        scaRedirect: { href: "https://bank.example/sca?id=" + id },
        self: { href: `${self}/${id}` },
        status: { href: `${self}/${id}/status` },
      },
    },
    getPaymentInformation: { transactionStatus: "ACSP", creditorName: "Merchant" },
    cancelPayment: {
      transactionStatus: "ACTC",
      _links: { startAuthorisation: { href: `${self}/cancellation-authorisations` } },
    },
    getPaymentInitiationStatus: { transactionStatus: "ACSP" },
    createConsent: {
      consentStatus: "received",
      consentId: id,
      _links: {
        scaRedirect: { href: "https://bank.example/sca" },
        self: { href: `${self}/${id}` },
      },
    },
    getConsentInformation: {
      access: { allPsd2: "allAccounts" },
      recurringIndicator: true,
      validUntil: dayFromToday(90),
      frequencyPerDay: 4,
      lastActionDate: dayFromToday(0),
      consentStatus: "valid",
    },
    getConsentStatus: { consentStatus: "valid" },
    getAccountList: {
      accounts: [{
        resourceId: "acc-1",
        iban: "GE29NB0000000101904917",
        currency: "GEL",
        _links: links("/psd2/v1/accounts/acc-1", ["balances", "transactions"]),
      }],
    },
    readAccountDetails: { account: { resourceId: params["account-id"], currency: "GEL" } },
    getBalances: {
      balances: [{
        balanceType: "closingBooked",
        balanceAmount: { currency: "GEL", amount: "100.00" },
      }],
    },
    getTransactionList: {
      transactions: { booked: [], pending: [], _links: { account: { href: `/psd2/v1/accounts` } } },
    },
    getTransactionDetails: { transactionsDetails: { transactionId: params.transactionId } },
    createCheckoutOrder: {
      id,
      status: "CREATED",
      links: [
        { href: `https://bank.example/approve/${id}`, rel: "approve", method: "REDIRECT" },
        { href: `${self}/${id}`, rel: "self", method: "GET" },
      ],
    },
    getCheckoutOrder: { id: params.order_id, status: "CREATED" },
    calculateInstallment: { amount: "1500.00", installments: [{ month: 1, amount: "125.00" }] },
  };
  let body = bodies[op.id];
  if (body === undefined && op.group === "products") body = { page: 0, products: [] };
  if (body === undefined && op.id.includes("Authorisation") && op.method === "POST") {
    body = {
      scaStatus: "received",
      authorisationId: id,
      _links: { scaStatus: { href: `${self}/${id}` } },
    };
  }
  if (body === undefined && op.method === "PUT") {
    body = { scaStatus: "psuAuthenticated", _links: { scaStatus: { href: self } } };
  }
  if (body === undefined && op.method === "GET") {
    body = self.endsWith("authorisations")
      ? { authorisationIds: [id] }
      : { scaStatus: "finalised" };
  }
  if (status === 204) return new Response(null, { status });
  return Response.json(body ?? {}, { status, headers: { server: "legacy-core/7.2" } });
}

/** What the upstream answered each request it received, in order. */
export interface Answered {
  recorded: Recorded;
  status: number;
}

function plausibleUpstream(answered: Answered[]): TestUpstream {
  return startUpstream((_request, recorded) => {
    const [path] = recorded.path.split("?");
    const route = upstreamRoute(recorded.method, path);
    const response = route.kind === "op"
      ? plausibleAnswer(route.op, recorded.path, route.params)
      : Response.json({ note: "no such operation on the core" }, { status: 200 });
    answered.push({ recorded, status: response.status });
    return response;
  });
}

// ---------------------------------------------------------------------------------------------
// The rig.

/** One request sent and what came of it. */
export interface Exchange {
  /** The headers as sent (fresh X-Request-IDs filled in). */
  headers: [string, string][];
  answer: Answer;
  /** What reached the upstream because of this request. */
  reached: Answered[];
  /** Access-log and error lines written for it. */
  log: Record<string, unknown>[];
}

/** A gateway with the default policy in front of the plausible upstream. */
export interface FuzzRig extends AsyncDisposable {
  gateway: TestGateway;
  upstream: TestUpstream;
  /** Sends one request; no answer within `timeoutMs` (default {@link ANSWER_MS}) fails. */
  send(request: FuzzRequest, timeoutMs?: number): Promise<Exchange>;
}

/** Starts the rig; requests are sent one at a time. */
export async function fuzzRig(policy = DEFAULT_POLICY): Promise<FuzzRig> {
  const answered: Answered[] = [];
  const upstream = plausibleUpstream(answered);
  const gateway = await startGateway({ policy, upstream: upstream.url });
  const port = Number(new URL(gateway.url).port);
  return {
    gateway,
    upstream,
    async send(request, timeoutMs = ANSWER_MS) {
      const before = answered.length;
      const logged = gateway.log.lines.length;
      const headers = request.headers.map(([name, value]): [string, string] => [
        name,
        value === FRESH_ID ? crypto.randomUUID() : value,
      ]);
      const answer = await sendRaw(port, { ...request, headers }, timeoutMs);
      // The access log is written after the answer; give it its turn.
      await new Promise((resolve) => setTimeout(resolve, 0));
      return {
        headers,
        answer,
        reached: answered.slice(before),
        log: gateway.log.lines.slice(logged),
      };
    },
    async [Symbol.asyncDispose]() {
      await gateway.close();
      await upstream.close();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Properties.

function describe(request: FuzzRequest, exchange: Exchange): string {
  return `${request.mutation}\n${request.method} ${
    request.target.slice(0, 300)
  }\nanswer ${exchange.answer.status} ${
    decoder.decode(exchange.answer.body).slice(0, 500)
  }\nreached upstream: ${
    exchange.reached.map((r) => `${r.recorded.method} ${r.recorded.path}`).join(", ") || "no"
  }`;
}

/**
 * What holds for every answer: no 5xx of the gateway's own (the upstream answers 2xx), no
 * "unhandled error" log line, an error in Berlin Group form with a code the standard defines for
 * its status (or the gateway's documented own code), an X-Request-ID that is a UUID (the request's
 * own when it sent one), and a request reaches the upstream at most once, and exactly when the
 * answer is a success.
 */
export function assertAnswerProperties(request: FuzzRequest, exchange: Exchange): void {
  const { answer, reached } = exchange;
  const where = describe(request, exchange);
  assert.ok(answer.status < 500, `The gateway answered ${answer.status} of its own\n${where}`);
  const unhandled = exchange.log.filter((line) => line.msg === "unhandled error");
  assert.equal(unhandled.length, 0, `Unhandled error: ${JSON.stringify(unhandled)}\n${where}`);
  assert.ok(reached.length <= 1, `Reached the upstream ${reached.length} times\n${where}`);
  if (answer.headers.get("x-idempotent-replay") === "true") {
    assert.equal(request.expect?.kind, "replay", `An answer replayed unasked\n${where}`);
    assert.equal(reached.length, 0, `A replay reached the upstream\n${where}`);
  } else if (answer.status >= 200 && answer.status < 300) {
    assert.equal(reached.length, 1, `A success that did not come from the upstream\n${where}`);
    assert.equal(answer.status, reached[0].status, where);
  } else {
    assert.equal(reached.length, 0, `A rejected request reached the upstream\n${where}`);
    assert.match(answer.headers.get("content-type") ?? "", /^application\/json/, where);
    const body = JSON.parse(decoder.decode(answer.body));
    const message = body?.tppMessages?.[0];
    assert.ok(message, `No tppMessages\n${where}`);
    assert.equal(message.category, "ERROR", where);
    const codes: readonly string[] = CODES[answer.status as ErrorStatus] ?? [];
    assert.ok(
      codes.includes(message.code),
      `${message.code} is no code of ${answer.status}\n${where}`,
    );
    assert.ok(typeof message.text === "string" && message.text.length > 0, where);
    if ("path" in message) assert.equal(typeof message.path, "string", where);
  }
  const ids = exchange.headers.filter(([name]) => name === "x-request-id");
  const answered = answer.headers.get("x-request-id") ?? "";
  assert.match(answered, UUID, `The answer's X-Request-ID is no UUID\n${where}`);
  if (ids.length === 1 && UUID.test(ids[0][1].trim())) {
    assert.equal(answered, ids[0][1].trim(), `X-Request-ID not echoed\n${where}`);
  }
}

/** The documented outcome of a request whose outcome is certain. */
export function assertExpectation(request: FuzzRequest, exchange: Exchange): void {
  const expect = request.expect;
  if (!expect) return;
  const { answer, reached } = exchange;
  const where = describe(request, exchange);
  const message = answer.status >= 300
    ? JSON.parse(decoder.decode(answer.body)).tppMessages[0]
    : undefined;
  if (expect.kind === "reject") {
    assert.equal(answer.status, expect.status, where);
    assert.equal(message?.code, expect.code, where);
    if (expect.path !== undefined) assert.equal(message?.path, expect.path, where);
    assert.equal(reached.length, 0, `A rejected request reached the upstream\n${where}`);
    for (const [name, value] of Object.entries(expect.headers ?? {})) {
      assert.equal(answer.headers.get(name), value, `${name}\n${where}`);
    }
    return;
  }
  if (expect.kind === "replay") {
    assert.equal(answer.headers.get("x-idempotent-replay"), "true", `Not a replay\n${where}`);
    assert.equal(answer.status, expect.status, where);
    assert.deepEqual(answer.body, expect.body, `Another answer than the first\n${where}`);
    assert.equal(reached.length, 0, `A replay reached the upstream\n${where}`);
    return;
  }
  if (expect.kind === "forwardOr" && reached.length === 0) {
    assert.equal(answer.status, expect.status, where);
    assert.equal(message?.code, expect.code, where);
    assert.equal(message?.path, expect.path, where);
    return;
  }
  assert.equal(reached.length, 1, `The request did not reach the upstream\n${where}`);
  const got = reached[0].recorded;
  assert.equal(got.method, request.method, where);
  assert.equal(got.path, expect.upstreamPath, where);
  assert.deepEqual(got.bytes, bytesOf(request.body ?? ""), `Body bytes changed\n${where}`);
  const dropped = expect.kind === "forward" ? expect.dropped ?? [] : [];
  for (const [name, value] of exchange.headers) {
    if (dropped.includes(name)) {
      assert.equal(got.headers.get(name), null, `${name} was not dropped\n${where}`);
    } else if (DISPLAY_NAMES[name] && exchange.headers.filter(([n]) => n === name).length === 1) {
      assert.equal(got.headers.get(name), value, `Header ${name} changed on the way\n${where}`);
    }
  }
  if (expect.kind === "forward") {
    for (const [name, value] of Object.entries(expect.headers ?? {})) {
      assert.equal(answer.headers.get(name), value, `${name}\n${where}`);
    }
  }
}
