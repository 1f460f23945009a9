/**
 * Account information of the legacy core: account list, account details and balances, each
 * within the limits of the consent named by the Consent-ID header.
 */
import type { Context, Hono } from "hono";
import { type Grants, grantsOf, requireConsent, requireGrant } from "./consent_access.ts";
import { accountBalances, ACCOUNTS, findAccount, type SeedAccount } from "./data.ts";
import { resourceUnknown } from "./errors.ts";
import { queryIsTrue } from "./report_pages.ts";
import type { Consent, SandboxState } from "./state.ts";

/** Relative href of an account. */
export function accountHref(account: SeedAccount): string {
  return `/psd2/v1/accounts/${account.resourceId}`;
}

/**
 * The account addressed by the path, once the consent is valid and grants `what` on it.
 *
 * Consent problems come first (403/401), then an unknown account (404), then a missing grant.
 */
export function readableAccount(
  c: Context,
  options: { state: SandboxState; what: keyof Grants },
): { account: SeedAccount; grants: Grants; consent: Consent } {
  const consent = requireConsent(c, options.state);
  const account = findAccount(c.req.param("accountId") ?? "");
  if (!account) throw resourceUnknown("Account", "account-id");
  const grants = grantsOf(consent, account);
  requireGrant(grants, options.what);
  return { account, grants, consent };
}

/** Mounts the account list, details and balances routes on the app. */
export function mountAccounts(app: Hono, state: SandboxState) {
  app.get("/psd2/v1/accounts", (c) => {
    const consent = requireConsent(c, state);
    const withBalance = queryIsTrue(c, "withBalance");
    const accounts = ACCOUNTS.flatMap((account) => {
      const grants = grantsOf(consent, account);
      if (!grants.list) return [];
      const view: Record<string, unknown> = accountView(account, grants);
      if (!grants.ownerName) delete view.ownerName;
      if (withBalance && grants.listBalances) view.balances = accountBalances(account);
      return [view];
    });
    return c.json({ accounts });
  });
  app.get("/psd2/v1/accounts/:accountId", (c) => {
    const { account, grants } = readableAccount(c, { state, what: "details" });
    const view: Record<string, unknown> = accountView(account, grants);
    if (queryIsTrue(c, "withBalance") && grants.balances) {
      view.balances = accountBalances(account);
    }
    return c.json({ account: view });
  });
  app.get("/psd2/v1/accounts/:accountId/balances", (c) => {
    const { account } = readableAccount(c, { state, what: "balances" });
    return c.json({ account: { iban: account.iban }, balances: accountBalances(account) });
  });
}

function accountView(account: SeedAccount, grants: Grants) {
  const href = accountHref(account);
  const links: Record<string, { href: string }> = { balances: { href: `${href}/balances` } };
  if (grants.transactions) links.transactions = { href: `${href}/transactions` };
  return {
    resourceId: account.resourceId,
    iban: account.iban,
    currency: account.currency,
    ownerName: account.ownerName,
    product: account.product,
    cashAccountType: account.cashAccountType,
    name: account.name,
    _links: links,
  };
}
