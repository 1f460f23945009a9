/**
 * What a consent grants, as `consent_scope` keeps it: the account references of its `access`
 * (IBAN, BBAN, PAN, masked PAN, MSISDN), each kept as `<kind>:<value>`, and which references each
 * account id of the account list (and card account id of the card account list) carries. A
 * reference grants only the account that carries the same reference: a consent naming a card by
 * `maskedPan` grants no account or card account that its list does not show with that
 * `maskedPan`, never every account. Accounts and card accounts are placed apart: an id the account
 * list showed is not a card account's, and the other way round.
 */

/** The account reference fields of the interface (AccountReference, AccountDetails). */
const REFERENCE_KINDS = ["iban", "bban", "pan", "maskedPan", "msisdn"] as const;

const ALL = new Set(["allAccounts", "allAccountsWithOwnerName"]);

/** What the gateway keeps of a consent (JSON in the store). */
export interface Scope {
  /** The TPP that created it, when it was identified. */
  tpp?: string;
  /** The last status the core reported. */
  status?: string;
  validUntil?: string;
  /** `all`: allPsd2; `list`: the account list only (availableAccounts...); else the lists. */
  grant?: "all" | "list" | "lists";
  /** References (`iban:GE29...`, `maskedPan:1234********5678`) granted for each kind of read. */
  accounts: string[];
  balances: string[];
  transactions: string[];
  /** The references of each account id (its canonical form) as the account list showed them. */
  places: Record<string, string[]>;
  /** The references of each card account id as the card account list showed them. */
  cardPlaces?: Record<string, string[]>;
}

/** The accounts or the card accounts: where each list keeps its members and its places. */
export interface Family {
  /** The list's member in the core's answer (`accounts`, `cardAccounts`). */
  member: "accounts" | "cardAccounts";
  /** Where the scope keeps the ids the list showed. */
  places: "places" | "cardPlaces";
  /** The list's public path, for the texts of refusals. */
  listPath: string;
  /** What the texts call one member. */
  noun: string;
}

/** Accounts: GET /v1/accounts and the reads under it. */
export const ACCOUNTS: Family = {
  member: "accounts",
  places: "places",
  listPath: "/v1/accounts",
  noun: "Account",
};

/** Card accounts (Berlin Group 1.3.11): GET /v1/card-accounts and the reads under it. */
export const CARD_ACCOUNTS: Family = {
  member: "cardAccounts",
  places: "cardPlaces",
  listPath: "/v1/card-accounts",
  noun: "Card account",
};

/** What an account read needs the consent to grant on its account. */
export type Need = "details" | "balances" | "transactions";

/** Whether a value is a JSON object. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The references an account reference or an account of the list carries, as `<kind>:<value>`:
 * spaces removed, letters in upper case (an IBAN's check digits and a masked PAN's stars are the
 * same in any case); none for a value that is not a non-empty string.
 */
export function references(account: unknown): string[] {
  if (!isObject(account)) return [];
  const found: string[] = [];
  for (const kind of REFERENCE_KINDS) {
    const value = account[kind];
    if (typeof value !== "string") continue;
    const normal = value.replace(/\s+/g, "").toUpperCase();
    if (normal !== "") found.push(`${kind}:${normal}`);
  }
  return found;
}

/** The grants of a consent's `access` object. */
export function accessScope(access: unknown): Omit<Scope, "places"> | undefined {
  if (!isObject(access)) return undefined;
  const scope: Omit<Scope, "places"> = { accounts: [], balances: [], transactions: [] };
  if (ALL.has(String(access.allPsd2))) return { ...scope, grant: "all" };
  let named = false;
  for (const list of ["accounts", "balances", "transactions"] as const) {
    const given = access[list];
    if (!Array.isArray(given)) continue;
    // A reference the gateway cannot read grants nothing here; the core may still refuse more.
    for (const reference of given) scope[list].push(...references(reference));
    named ||= given.length > 0;
  }
  if (named) return { ...scope, grant: "lists" };
  const listOnly = ALL.has(String(access.availableAccounts)) ||
    ALL.has(String(access.availableAccountsWithBalance));
  return listOnly ? { ...scope, grant: "list" } : undefined;
}

/** Whether the consent grants `need` on an account that carries `carried` references. */
export function grants(scope: Scope, need: Need, carried: readonly string[]): boolean {
  const given = need === "balances"
    ? scope.balances
    : need === "transactions"
    ? scope.transactions
    : [...scope.accounts, ...scope.balances, ...scope.transactions];
  return carried.some((reference) => given.includes(reference));
}

/**
 * The references of an account id as its family's list showed them (the account list by default),
 * if the gateway saw it.
 */
export function place(
  scope: Scope,
  accountId: string,
  family: Family = ACCOUNTS,
): readonly string[] | undefined {
  const places = scope[family.places] ?? {};
  return Object.hasOwn(places, accountId) ? places[accountId] : undefined;
}

/**
 * A scope read from the store. Records kept before references had kinds held bare IBANs, which
 * are read as IBANs; their account ids by IBAN are dropped (the next account list learns them).
 */
export function storedScope(text: string): Scope {
  const { resources: _byIban, opaque: _opaque, cardPlaces, ...stored } = JSON.parse(text) as
    & Partial<Scope>
    & { resources?: unknown; opaque?: unknown };
  const kinded = (list: unknown) =>
    Array.isArray(list)
      ? list.filter((r) => typeof r === "string").map((r) => r.includes(":") ? r : `iban:${r}`)
      : [];
  return {
    ...stored,
    accounts: kinded(stored.accounts),
    balances: kinded(stored.balances),
    transactions: kinded(stored.transactions),
    places: isObject(stored.places) ? stored.places as Record<string, string[]> : {},
    ...(isObject(cardPlaces) ? { cardPlaces: cardPlaces as Record<string, string[]> } : {}),
  };
}
