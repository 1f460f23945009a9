/**
 * The sandbox bank: an in-memory legacy core banking system behind both interface documents, and
 * the PSD2 testing facility TPPs meet first: SCA pages for the redirect approach, embedded and
 * decoupled SCA, test users with fixed behaviours and controls under `/sandbox/`.
 *
 * It answers like the bank's old core does (legacy prefix `/psd2/v1`, `Server` and
 * `X-Powered-By` headers, absolute catalogue links), so the gateway has something real to
 * proxy, rewrite and strip.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createSandbox } from "./mod.ts";
 *
 * const app = createSandbox({ now: () => new Date("2025-07-01T10:00:00Z") });
 * const res = await app.request("/v1/products/en?page=1");
 * assert.equal(res.status, 200);
 * await res.body?.cancel();
 * ```
 */
import { Hono } from "hono";
import { mountAccounts } from "./accounts.ts";
import { mountBaskets } from "./baskets.ts";
import { mountCardAccounts } from "./card_accounts.ts";
import { DEFAULT_CA_DIR, mountCa } from "./ca.ts";
import { BANK_SCA_ORIGIN } from "./authorisations.ts";
import { mountCheckout } from "./checkout.ts";
import { mountConsents } from "./consents.ts";
import { mountControls } from "./controls.ts";
import { mountFunds } from "./funds.ts";
import { renderNotFound, renderSandboxError } from "./errors.ts";
import { mountInstallment } from "./installment.ts";
import { mountPayments } from "./payments.ts";
import { mountProducts } from "./products.ts";
import { recordRequests } from "./request_log.ts";
import { settleDecoupled } from "./sca_flow.ts";
import { mountScaPages } from "./sca_pages.ts";
import { createState } from "./state.ts";
import { mountTransactions } from "./transactions.ts";

/** Headers the legacy core puts on every response (the gateway strips them). */
export const LEGACY_HEADERS = { Server: "legacy-core/7.2", "X-Powered-By": "CoreBanking" };

/** Milliseconds until the PSU's app answers a decoupled authorisation, unless configured. */
export const DEFAULT_DECOUPLED_DELAY_MS = 5000;

/** Options of {@link createSandbox}. */
export interface SandboxOptions {
  /** The base clock, for consent expiry, checkout holds and decoupled SCA; the real time. */
  now?: () => Date;
  /**
   * Origin of the SCA pages in `scaRedirect` links (a function is read when a link is made). It
   * must reach this sandbox from a browser and must not be the origin the gateway's upstream URL
   * names: the gateway turns links to that origin into relative paths of its own.
   * Default: the placeholder `https://sandbox-bank.example`.
   */
  scaOrigin?: string | (() => string);
  /** Decoupled SCA: delay until the PSU's app answers (default 5000 ms). */
  decoupledDelayMs?: number;
  /** Directory of the sandbox CA whose certificate and CRL `/sandbox/ca/` serves (default `data/sandbox-ca`). */
  caDir?: string;
}

/** Builds a sandbox bank with its own empty state. */
export function createSandbox(options: SandboxOptions = {}): Hono {
  const origin = options.scaOrigin ?? BANK_SCA_ORIGIN;
  const state = createState(options.now ?? (() => new Date()), {
    scaOrigin: typeof origin === "string" ? () => origin : origin,
    decoupledDelayMs: options.decoupledDelayMs ?? DEFAULT_DECOUPLED_DELAY_MS,
  });
  const app = new Hono();
  app.use("*", async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(LEGACY_HEADERS)) c.res.headers.set(name, value);
    // The interface has every answer carry the request's X-Request-ID; the gateway reuses a
    // connection to a core that echoes it (upstream.reuse: echoed).
    const requestId = c.req.header("x-request-id");
    if (requestId !== undefined) c.res.headers.set("x-request-id", requestId);
  });
  app.use("*", recordRequests(state));
  app.use("*", async (_c, next) => {
    // Decoupled authorisations whose time has come are completed before anything reads them.
    settleDecoupled(state);
    await next();
  });
  app.onError(renderSandboxError);
  app.notFound(renderNotFound);
  // Before payments and consents: it notes which TPP creates each.
  mountBaskets(app, state);
  mountPayments(app, state);
  mountConsents(app, state);
  mountAccounts(app, state);
  mountTransactions(app, state);
  mountCardAccounts(app, state);
  mountFunds(app);
  mountCheckout(app, state);
  mountInstallment(app);
  mountProducts(app);
  mountScaPages(app, state);
  mountControls(app, state);
  mountCa(app, options.caDir ?? DEFAULT_CA_DIR);
  return app;
}
