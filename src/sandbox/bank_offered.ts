/**
 * Bank-offered consents: the TPP asks for access without naming accounts (`accounts`,
 * `balances` and `transactions` as empty arrays, or an empty `access`), and the PSU picks the
 * accounts on the SCA page. The consent then names them in each of the access's lists.
 */
import { ACCOUNTS } from "./data.ts";
import type { Consent, Subject } from "./state.ts";

const LISTS = ["accounts", "balances", "transactions"] as const;

/** An account the PSU may pick. */
export interface OfferedAccount {
  iban: string;
  name: string;
}

/** Whether the consent leaves the choice of accounts to the PSU. */
export function isBankOffered(consent: Consent): boolean {
  const access = consent.access;
  const keys = Object.keys(access);
  if (keys.length === 0) return true;
  return keys.every((key) => (LISTS as readonly string[]).includes(key)) &&
    LISTS.every((key) => access[key] === undefined || isEmptyList(access[key])) &&
    LISTS.some((key) => isEmptyList(access[key]));
}

/** The accounts the SCA page offers when the subject is a bank-offered consent, else none. */
export function offeredAccounts(subject: Subject): OfferedAccount[] | undefined {
  if (subject.kind !== "consent" || !isBankOffered(subject.consent)) return undefined;
  return ACCOUNTS.map((account) => ({ iban: account.iban, name: account.name }));
}

/**
 * Names the PSU's accounts in the consent: in each list the TPP sent empty (all three for an
 * empty access). Ibans the sandbox does not hold are left out.
 */
export function nameAccounts(consent: Consent, ibans: readonly string[]) {
  const known = ACCOUNTS.filter((account) => ibans.includes(account.iban));
  const lists = Object.keys(consent.access).length === 0
    ? LISTS
    : LISTS.filter((key) => isEmptyList(consent.access[key]));
  const access = { ...consent.access };
  for (const key of lists) access[key] = known.map((account) => ({ iban: account.iban }));
  consent.access = access;
}

function isEmptyList(value: unknown): boolean {
  return Array.isArray(value) && value.length === 0;
}
