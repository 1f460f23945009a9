/**
 * The soak's load generator, run by bench/soak.ts as its own process: many TPPs, a fresh
 * X-Request-ID on every request, account reads mixed with payment initiations.
 *
 * A TPP without a certificate or token is known to the gateway by its client address
 * (`ip:<address>`, docs/shared_state.md), so each connection binds its own loopback source
 * address (127.x.y.z; all of 127.0.0.0/8 is local on Linux) and, after `perConnection` requests,
 * closes and reconnects from the next address of the pool: the gateway sees `tpps` callers and
 * a steady churn of connections. Every request draws a PSU (PSU-ID, account, Consent-ID) from
 * `psus`. Reads are half PSU-initiated (PSU-IP-Address sent) and half TPP-initiated on consents
 * the gateway never learnt, so consent frequency forwards them all (`unknown_consent_limit: 0` in
 * the default policy); payments are valid SEPA credit transfers (tests/support/requests.ts).
 *
 * Arguments: one JSON object (see {@link LoadOptions}). Output on stdout, one JSON object a line:
 * `{"progress":...}` every second, `{"done":...}` at the end.
 */
import { singlePayment } from "../tests/support/requests.ts";

/** What the load generator is told to do. */
export interface LoadOptions {
  /** The gateway, for example http://127.0.0.1:8080. */
  target: string;
  /** Stop after this many seconds (0: no time limit). */
  seconds: number;
  /** Stop after this many requests (0: no count limit). */
  requests: number;
  /** Requests per second to aim at (0: as fast as the gateway answers). */
  rate: number;
  /** Requests in flight at once (one connection each). */
  connections: number;
  /** Distinct client addresses (TPPs). */
  tpps: number;
  /** First index into the address pool (so that a later run continues with new TPPs). */
  firstTpp: number;
  /** Requests on one connection before it reconnects from the next address. */
  perConnection: number;
  /** Distinct PSUs (PSU-ID, account, Consent-ID). */
  psus: number;
  /** Share of payment initiations, 0 to 1 (the rest are account reads). */
  payments: number;
}

/** Totals the generator reports. */
export interface LoadTotals {
  /** Requests answered (any status). */
  answered: number;
  /** Requests that got no answer (connection errors), by error name. */
  failed: Record<string, number>;
  /** Answers by HTTP status. */
  statuses: Record<string, number>;
  /** Answers by kind of request (read, payment) and status. */
  byKind: Record<string, Record<string, number>>;
  /** Answers marked X-Idempotent-Replay (none expected: every X-Request-ID is new). */
  replays: number;
  /** Connections opened (one per client address used). */
  connections: number;
  /** Distinct client addresses used. */
  tpps: number;
  /** Seconds since the start. */
  seconds: number;
}

/** The loopback source address of TPP number `n` (never .0 or .255 in any octet). */
export function tppAddress(n: number): string {
  const a = 1 + Math.floor(n / 62_500) % 250;
  const b = 1 + Math.floor(n / 250) % 250;
  const c = 1 + n % 250;
  return `127.${a}.${b}.${c}`;
}

const options: LoadOptions = JSON.parse(Deno.args[0] ?? "{}");
const payment = singlePayment();
const paymentPath = "/v1/payments/sepa-credit-transfers";
const READS = [
  (account: string) => `/v1/accounts/${account}/balances`,
  (account: string) => `/v1/accounts/${account}?withBalance=true`,
  (account: string) =>
    `/v1/accounts/${account}/transactions?bookingStatus=booked&dateFrom=2026-01-01`,
];

const totals: LoadTotals = {
  answered: 0,
  failed: {},
  statuses: {},
  byKind: { read: {}, payment: {} },
  replays: 0,
  connections: 0,
  tpps: 0,
  seconds: 0,
};
const started = performance.now();
let scheduled = 0;
let nextTpp = 0;
const usedTpps = new Set<number>();

function bump(counts: Record<string, number>, key: string) {
  counts[key] = (counts[key] ?? 0) + 1;
}

/** The next request's slot, or undefined when the run is over; waits for its time when paced. */
async function slot(): Promise<boolean> {
  const elapsed = (performance.now() - started) / 1000;
  if (options.seconds > 0 && elapsed >= options.seconds) return false;
  if (options.requests > 0 && scheduled >= options.requests) return false;
  const n = scheduled++;
  if (options.rate > 0) {
    // Request n is due at n / rate seconds; a generator that fell behind does not burst to
    // catch up by more than one second's worth.
    const due = n / options.rate;
    const behind = elapsed - due;
    if (behind > 1) scheduled += Math.floor((behind - 1) * options.rate);
    else if (due > elapsed) await new Promise((r) => setTimeout(r, (due - elapsed) * 1000));
  }
  return true;
}

function request(client: Deno.HttpClient): [string, Promise<Response>] {
  const psu = Math.floor(Math.random() * options.psus);
  const headers: Record<string, string> = {
    "x-request-id": crypto.randomUUID(),
    "psu-id": `psu-${psu}`,
  };
  if (Math.random() < options.payments) {
    headers["psu-ip-address"] = `192.0.2.${1 + psu % 250}`;
    headers["content-type"] = "application/json";
    payment.endToEndIdentification = `E2E-${psu}-${scheduled}`;
    payment.instructedAmount = { currency: "EUR", amount: `${1 + psu % 900}.${psu % 100}` };
    return [
      "payment",
      fetch(options.target + paymentPath, {
        method: "POST",
        headers,
        body: JSON.stringify(payment),
        client,
      }),
    ];
  }
  headers["consent-id"] = `consent-${psu}`;
  if (psu % 2 === 0) headers["psu-ip-address"] = `192.0.2.${1 + psu % 250}`;
  const path = READS[psu % READS.length](`acc-${psu}`);
  return ["read", fetch(options.target + path, { headers, client })];
}

/** One connection at a time from its own address; reconnects from the next address. */
async function worker(): Promise<void> {
  while (true) {
    const tpp = options.firstTpp + nextTpp++ % options.tpps;
    usedTpps.add(tpp);
    totals.connections++;
    const client = Deno.createHttpClient({ localAddress: tppAddress(tpp) });
    try {
      for (let i = 0; i < options.perConnection; i++) {
        if (!await slot()) return;
        const [kind, pending] = request(client);
        try {
          const response = await pending;
          await response.arrayBuffer();
          totals.answered++;
          bump(totals.statuses, String(response.status));
          bump(totals.byKind[kind], String(response.status));
          if (response.headers.get("x-idempotent-replay")) totals.replays++;
        } catch (error) {
          bump(totals.failed, error instanceof Error ? error.name : String(error));
        }
      }
    } finally {
      client.close();
    }
  }
}

function snapshot(): LoadTotals {
  totals.seconds = (performance.now() - started) / 1000;
  totals.tpps = usedTpps.size;
  return totals;
}

const progress = setInterval(
  () => console.log(JSON.stringify({ progress: snapshot() })),
  1000,
);
await Promise.all(Array.from({ length: options.connections }, worker));
clearInterval(progress);
console.log(JSON.stringify({ done: snapshot() }));
