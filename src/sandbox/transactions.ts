/**
 * Transaction reads of the legacy core: the filtered transaction list and single transaction
 * details of an account.
 *
 * Filters: `bookingStatus` (information, booked, pending, both, all; required), `dateFrom` and
 * `dateTo` (inclusive; dateTo defaults to today). Booked entries filter by bookingDate, pending
 * entries by valueDate (their entry date). `all` adds the standing orders of `information`.
 * Delta reports and pages as src/sandbox/report_pages.ts says; `withBalance=true` adds the
 * account's balances where the consent grants them. Entries carry their `entryReference`.
 */
import type { Hono } from "hono";
import { accountHref, readableAccount } from "./accounts.ts";
import { accountBalances } from "./data.ts";
import { deltaOf, pageOf, queryIsTrue, readFilters } from "./report_pages.ts";
import { resourceUnknown } from "./errors.ts";
import type { SandboxState } from "./state.ts";
import {
  type AccountTransactions,
  type SeedTransaction,
  TRANSACTIONS,
} from "./transaction_data.ts";

const NO_TRANSACTIONS: AccountTransactions = { booked: [], pending: [], information: [] };

const BOOKING_STATUSES = ["information", "booked", "pending", "both", "all"];

/** Mounts the transaction list and details routes on the app. */
export function mountTransactions(app: Hono, state: SandboxState) {
  app.get("/psd2/v1/accounts/:accountId/transactions", (c) => {
    const { account, grants, consent } = readableAccount(c, { state, what: "transactions" });
    const { status, from, to } = readFilters(c, state.now(), BOOKING_STATUSES);
    const seed = TRANSACTIONS.get(account.resourceId) ?? NO_TRANSACTIONS;
    const href = accountHref(account);
    const inRange = (date: string) => date >= from && date <= to;
    const view = (t: SeedTransaction) => ({
      entryReference: t.transactionId,
      ...t,
      _links: { transactionDetails: { href: `${href}/transactions/${t.transactionId}` } },
    });
    const transactions: Record<string, unknown> = {};
    const booked = ["booked", "both", "all"].includes(status)
      ? deltaOf(c, {
        booked: seed.booked.filter((t) => inRange(t.bookingDate ?? "")),
        consent,
        accountId: account.resourceId,
      })
      : [];
    const page = pageOf(c, { entries: booked, href: `${href}/transactions` });
    const first = (page.index ?? 0) === 0;
    if (["booked", "both", "all"].includes(status)) transactions.booked = page.entries.map(view);
    if (["pending", "both", "all"].includes(status)) {
      transactions.pending = first
        ? seed.pending.filter((t) => inRange(t.valueDate)).map(view)
        : [];
    }
    if (["information", "all"].includes(status) && first) {
      transactions.information = seed.information;
    }
    transactions._links = { account: { href }, ...page.links };
    const report: Record<string, unknown> = { account: { iban: account.iban }, transactions };
    if (queryIsTrue(c, "withBalance") && grants.balances) {
      report.balances = accountBalances(account);
    }
    return c.json(report);
  });
  app.get("/psd2/v1/accounts/:accountId/transactions/:transactionId", (c) => {
    const { account } = readableAccount(c, { state, what: "transactions" });
    const seed = TRANSACTIONS.get(account.resourceId) ?? NO_TRANSACTIONS;
    const id = c.req.param("transactionId");
    const entry = [...seed.booked, ...seed.pending].find((t) => t.transactionId === id);
    if (!entry) throw resourceUnknown("Transaction", "transactionId");
    return c.json({
      transactionsDetails: {
        entryReference: entry.transactionId,
        ...entry,
        mandateId: `MNDT-${entry.transactionId}`,
      },
    });
  });
}
