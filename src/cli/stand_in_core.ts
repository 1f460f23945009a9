/**
 * The stand-in core of `policy:test`: an HTTP server on 127.0.0.1 that answers every operation of
 * the interface plausibly (a creation 201 with its id, status and links, a read 200, a deletion
 * 204), so that a policy is tested offline, through the real proxy, without the sandbox bank's
 * state. It never refuses: what a case sees is the gateway's decision, not the core's.
 */

/** A running stand-in core. */
export interface StandInCore extends AsyncDisposable {
  /** Its base URL, for the policy's `${UPSTREAM_URL}`. */
  url: string;
  /** How many requests reached it (a case may expect that its request never did). */
  readonly requests: number;
  close(): Promise<void>;
}

const HEADERS = { "content-type": "application/json" };

/** The id a creation answers with, named as the interface names it under that path. */
function created(path: string): Record<string, unknown> {
  const self = path.replace(/\/+$/, "");
  if (/\/consents(\/confirmation-of-funds)?$/.test(self)) {
    return {
      consentStatus: "received",
      consentId: "consent-1",
      _links: { self: { href: `${self}/consent-1` }, status: { href: `${self}/consent-1/status` } },
    };
  }
  if (/\/authorisations$/.test(self)) {
    return {
      scaStatus: "received",
      authorisationId: "auth-1",
      _links: { scaStatus: { href: `${self}/auth-1` } },
    };
  }
  return {
    transactionStatus: "RCVD",
    paymentId: "payment-1",
    _links: { self: { href: `${self}/payment-1` }, status: { href: `${self}/payment-1/status` } },
  };
}

/** A read's answer: the status fields and a small account list cover what the checks read. */
function read(path: string): Record<string, unknown> {
  if (path.endsWith("/status")) {
    return { transactionStatus: "ACSC", consentStatus: "valid", scaStatus: "finalised" };
  }
  return {
    accounts: [{ resourceId: "account-1", iban: "DE02100100109307118603", currency: "EUR" }],
    balances: [{ balanceType: "expected", balanceAmount: { currency: "EUR", amount: "10.00" } }],
    _links: { self: { href: path } },
  };
}

/** Starts the stand-in core on a free port of 127.0.0.1. */
export function startStandInCore(): StandInCore {
  let requests = 0;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      requests++;
      await request.arrayBuffer();
      const { pathname } = new URL(request.url);
      switch (request.method) {
        case "POST":
          return Response.json(created(pathname), { status: 201, headers: HEADERS });
        case "DELETE":
          return new Response(null, { status: 204 });
        case "PUT":
          return Response.json({ scaStatus: "finalised" }, { headers: HEADERS });
        default:
          return Response.json(read(pathname), { headers: HEADERS });
      }
    },
  );
  const close = () => server.shutdown();
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    get requests() {
      return requests;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
