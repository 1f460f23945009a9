/**
 * The sandbox bank: an in-memory legacy core banking system behind both interface documents.
 *
 * It answers like the bank's old core does (legacy prefix `/psd2/v1`, `Server` and
 * `X-Powered-By` headers, absolute catalogue links), so the gateway has something real to
 * proxy, rewrite and strip.
 *
 * @example
 * const app = createSandbox({ now: () => new Date("2025-07-01T10:00:00Z") });
 * const res = await app.request("/v1/products/en?page=1");
 */
import { Hono } from "hono";
import { mountAccounts } from "./accounts.ts";
import { mountCheckout } from "./checkout.ts";
import { mountConsents } from "./consents.ts";
import { renderNotFound, renderSandboxError } from "./errors.ts";
import { mountInstallment } from "./installment.ts";
import { mountPayments } from "./payments.ts";
import { mountProducts } from "./products.ts";
import { createState } from "./state.ts";
import { mountTransactions } from "./transactions.ts";

/** Headers the legacy core puts on every response (the gateway strips them). */
export const LEGACY_HEADERS = { Server: "legacy-core/7.2", "X-Powered-By": "CoreBanking" };

/** Options of {@link createSandbox}. */
export interface SandboxOptions {
  /** The sandbox clock, for consent expiry and checkout holds; defaults to the real time. */
  now?: () => Date;
}

/** Builds a sandbox bank with its own empty state. */
export function createSandbox(options: SandboxOptions = {}): Hono {
  const state = createState(options.now ?? (() => new Date()));
  const app = new Hono();
  app.use("*", async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(LEGACY_HEADERS)) c.res.headers.set(name, value);
  });
  app.onError(renderSandboxError);
  app.notFound(renderNotFound);
  mountPayments(app, state);
  mountConsents(app, state);
  mountAccounts(app, state);
  mountTransactions(app, state);
  mountCheckout(app, state);
  mountInstallment(app);
  mountProducts(app);
  return app;
}
