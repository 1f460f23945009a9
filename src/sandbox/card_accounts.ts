/**
 * Card accounts of the legacy core (Berlin Group 1.3.11): the card account list, details,
 * balances and transaction list, each within the limits of the consent named by the Consent-ID
 * header, as account reads are. The cards are the test user PSU-CARD's: a consent of another PSU
 * lists none and reads none (404).
 *
 * The transaction list takes `bookingStatus` (booked, pending, both; required) and
 * `dateFrom`/`dateTo` (inclusive; dateTo defaults to today): booked entries filter by bookingDate,
 * pending ones by transactionDate. Delta reports (`entryReferenceFrom` naming a
 * `cardTransactionId`, `deltaList`) and pages (`itemsPerPage`, `pageIndex`) as account reports
 * have them (src/sandbox/report_pages.ts), the paging links under `cardTransactions._links`.
 */
import type { Context, Hono } from "hono";
import { type Grants, grantsOf, requireConsent, requireGrant } from "./consent_access.ts";
import {
  CARD_TRANSACTIONS,
  cardBalances,
  CARDS,
  findCard,
  type SeedCard,
  type SeedCardTransaction,
} from "./card_data.ts";
import { resourceUnknown } from "./errors.ts";
import { deltaOf, pageOf, readFilters } from "./report_pages.ts";
import type { Consent, SandboxState } from "./state.ts";
import { behaviourOf } from "./test_users.ts";

const BASE = "/psd2/v1/card-accounts";
const BOOKING_STATUSES = ["booked", "pending", "both"];

/** Relative href of a card account. */
export function cardHref(card: SeedCard): string {
  return `${BASE}/${card.resourceId}`;
}

/** The cards of the consent's PSU (only PSU-CARD holds any). */
function cardsOf(consent: Consent): readonly SeedCard[] {
  return behaviourOf(consent.psuId) === "cardHolder" ? CARDS : [];
}

/**
 * The card account addressed by the path, once the consent is valid and grants `what` on it:
 * consent problems first (403/401), then an unknown card or one of another PSU (404), then a
 * missing grant (401).
 */
function readableCard(
  c: Context,
  options: { state: SandboxState; what: keyof Grants },
): { card: SeedCard; grants: Grants; consent: Consent } {
  const consent = requireConsent(c, options.state);
  const card = findCard(c.req.param("accountId") ?? "");
  if (!card || !cardsOf(consent).includes(card)) {
    throw resourceUnknown("Card account", "account-id");
  }
  const grants = grantsOf(consent, card);
  requireGrant(grants, options.what);
  return { card, grants, consent };
}

/** Mounts the card account routes on the app. */
export function mountCardAccounts(app: Hono, state: SandboxState) {
  app.get(BASE, (c) => {
    const consent = requireConsent(c, state);
    const cardAccounts = cardsOf(consent).flatMap((card) => {
      const grants = grantsOf(consent, card);
      if (!grants.list) return [];
      const view = cardView(card, grants);
      if (!grants.ownerName) delete view.ownerName;
      if (grants.listBalances) view.balances = cardBalances(card);
      return [view];
    });
    return c.json({ cardAccounts });
  });
  app.get(`${BASE}/:accountId`, (c) => {
    const { card, grants } = readableCard(c, { state, what: "details" });
    const view = cardView(card, grants);
    if (grants.balances) view.balances = cardBalances(card);
    return c.json({ cardAccount: view });
  });
  app.get(`${BASE}/:accountId/balances`, (c) => {
    const { card } = readableCard(c, { state, what: "balances" });
    return c.json({
      cardAccount: { maskedPan: card.maskedPan },
      debitAccounting: false,
      balances: cardBalances(card),
    });
  });
  app.get(`${BASE}/:accountId/transactions`, (c) => {
    const { card, consent } = readableCard(c, { state, what: "transactions" });
    const { status, from, to } = readFilters(c, state.now(), BOOKING_STATUSES);
    const seed = CARD_TRANSACTIONS.get(card.resourceId) ?? { booked: [], pending: [] };
    const inRange = (date: string | undefined) => date !== undefined && date >= from && date <= to;
    const href = cardHref(card);
    const wanted = (kind: string) => status === kind || status === "both";
    // Delta reports name entries by transactionId; a card entry's is its cardTransactionId.
    const booked = wanted("booked")
      ? deltaOf(c, {
        booked: seed.booked.filter((t) => inRange(t.bookingDate)).map(keyed),
        consent,
        accountId: card.resourceId,
      })
      : [];
    const page = pageOf(c, { entries: booked, href: `${href}/transactions` });
    const report: Record<string, unknown> = {};
    if (wanted("booked")) report.booked = page.entries.map((e) => e.entry);
    if (wanted("pending")) {
      report.pending = (page.index ?? 0) === 0
        ? seed.pending.filter((t) => inRange(t.transactionDate))
        : [];
    }
    report._links = { cardAccount: { href }, ...page.links };
    return c.json({
      cardAccount: { maskedPan: card.maskedPan },
      debitAccounting: false,
      cardTransactions: report,
    });
  });
}

function keyed(entry: SeedCardTransaction) {
  return { transactionId: entry.cardTransactionId, entry };
}

function cardView(card: SeedCard, grants: Grants): Record<string, unknown> {
  const href = cardHref(card);
  const links: Record<string, { href: string }> = {};
  if (grants.balances) links.balances = { href: `${href}/balances` };
  if (grants.transactions) links.transactions = { href: `${href}/transactions` };
  return {
    resourceId: card.resourceId,
    maskedPan: card.maskedPan,
    currency: card.currency,
    ownerName: card.ownerName,
    name: card.name,
    product: card.product,
    status: "enabled",
    usage: "PRIV",
    debitAccounting: false,
    creditLimit: card.creditLimit,
    _links: links,
  };
}
