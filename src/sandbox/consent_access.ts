/**
 * What a consent lets an account read see: the Consent-ID check and the grants per account.
 *
 * Grants come from `access.accounts`, `access.balances` and `access.transactions` (account
 * references by iban, card accounts by maskedPan; balances and transactions imply details), or
 * from the extensions
 * `allPsd2: "allAccounts"` (everything), `availableAccounts: "allAccounts"` (the list only) and
 * `availableAccountsWithBalance: "allAccounts"` (the list with balances). The account list shows
 * an account's `ownerName` when the consent asks for it: `access.additionalInformation.ownerName`
 * names the account (an empty array: every account of the consent), or an extension's value is
 * `allAccountsWithOwnerName`.
 */
import type { Context } from "hono";
import { effectiveStatus } from "./consent_rules.ts";
import { formatError, SandboxError } from "./errors.ts";
import { headerValue, isObject } from "./request.ts";
import type { Consent, SandboxState } from "./state.ts";

/** What a consent grants on one account. */
export interface Grants {
  list: boolean;
  /** Balances may be shown in the account list (`withBalance=true`). */
  listBalances: boolean;
  details: boolean;
  balances: boolean;
  transactions: boolean;
  /** The account list shows the account's `ownerName`. */
  ownerName: boolean;
}

const ALL = ["allAccounts", "allAccountsWithOwnerName"];

/** What a consent's account references can name: an account's IBAN or a card's masked PAN. */
export interface Referenced {
  iban?: string;
  maskedPan?: string;
}

/**
 * The valid consent named by the Consent-ID header.
 *
 * Unknown: 403 CONSENT_UNKNOWN; not yet authorised: 401 CONSENT_INVALID; expired or
 * terminated: 401 CONSENT_EXPIRED.
 */
export function requireConsent(c: Context, state: SandboxState): Consent {
  const id = headerValue(c, "Consent-ID");
  if (!id) throw formatError('Header "Consent-ID" is missing', "Consent-ID");
  const consent = state.consents.get(id);
  if (!consent) {
    throw new SandboxError(403, "CONSENT_UNKNOWN", {
      text: `Consent "${id}" is unknown`,
      path: "Consent-ID",
    });
  }
  const status = effectiveStatus(consent, state.now());
  if (status === "valid") return consent;
  const code = status === "received" ? "CONSENT_INVALID" : "CONSENT_EXPIRED";
  const text = status === "received"
    ? `Consent "${id}" is not authorised yet`
    : `Consent "${id}" has status "${status}"`;
  throw new SandboxError(401, code, { text, path: "Consent-ID" });
}

/** What the consent grants on the account or card account. */
export function grantsOf(consent: Consent, account: Referenced): Grants {
  const access = consent.access;
  const withOwner = [access.allPsd2, access.availableAccounts, access.availableAccountsWithBalance]
    .includes("allAccountsWithOwnerName");
  if (ALL.includes(String(access.allPsd2))) {
    return {
      list: true,
      listBalances: true,
      details: true,
      balances: true,
      transactions: true,
      ownerName: withOwner,
    };
  }
  const balances = names(access.balances, account);
  const transactions = names(access.transactions, account);
  const details = balances || transactions || names(access.accounts, account);
  const list = details || ALL.includes(String(access.availableAccounts)) ||
    ALL.includes(String(access.availableAccountsWithBalance));
  const listBalances = balances || ALL.includes(String(access.availableAccountsWithBalance));
  const extra = isObject(access.additionalInformation) ? access.additionalInformation : {};
  const owners = extra.ownerName;
  const ownerName = withOwner ||
    (Array.isArray(owners) && (owners.length === 0 ? details : names(owners, account)));
  return { list, listBalances, details, balances, transactions, ownerName: list && ownerName };
}

/** Throws 401 CONSENT_INVALID when the consent does not grant `what` on the account. */
export function requireGrant(grants: Grants, what: keyof Grants) {
  if (grants[what]) return;
  throw new SandboxError(401, "CONSENT_INVALID", {
    text: `The consent does not grant "${what}" for this account`,
    path: "Consent-ID",
  });
}

function names(references: unknown, account: Referenced): boolean {
  if (!Array.isArray(references)) return false;
  return references.some((ref) =>
    isObject(ref) &&
    ((account.iban !== undefined && normalise(ref.iban) === normalise(account.iban)) ||
      (account.maskedPan !== undefined &&
        normalise(ref.maskedPan) === normalise(account.maskedPan)))
  );
}

function normalise(reference: unknown): string {
  return typeof reference === "string" ? reference.replace(/\s+/g, "").toUpperCase() : "";
}
