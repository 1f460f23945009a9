/**
 * Deterministic seed accounts of the sandbox bank, with their balances.
 *
 * IBANs are Georgian (GE, 2 check digits, bank code SB, 16 digits) and mod-97 valid; resource
 * ids never change, so tests and the gateway's examples can name them.
 */

/** A seed account as the core stores it. */
export interface SeedAccount {
  resourceId: string;
  iban: string;
  /** `XXX` for the multicurrency account. */
  currency: string;
  ownerName: string;
  product: string;
  cashAccountType: string;
  name: string;
  /** Balances per currency: [closingBooked, expected]. */
  balances: Record<string, [string, string]>;
}

/** Day the seed balances refer to. */
export const BALANCE_DATE = "2025-06-30";

/** Every account of the sandbox bank. */
export const ACCOUNTS: readonly SeedAccount[] = [
  {
    resourceId: "5b1f3c2e-7a41-4d6b-9c0e-000000000001",
    iban: "GE42SB0000000101904917",
    currency: "GEL",
    ownerName: "Nino Beridze",
    product: "Current account",
    cashAccountType: "CACC",
    name: "Main account",
    balances: { GEL: ["2540.75", "2391.25"] },
  },
  {
    resourceId: "5b1f3c2e-7a41-4d6b-9c0e-000000000002",
    iban: "GE15SB0000000101904918",
    currency: "GEL",
    ownerName: "Nino Beridze",
    product: "Savings account",
    cashAccountType: "SVGS",
    name: "Savings",
    balances: { GEL: ["15000.00", "15000.00"] },
  },
  {
    resourceId: "5b1f3c2e-7a41-4d6b-9c0e-000000000003",
    iban: "GE85SB0000000101904919",
    currency: "GEL",
    ownerName: "Nino Beridze",
    product: "Salary account",
    cashAccountType: "CACC",
    name: "Salary",
    balances: { GEL: ["830.10", "780.10"] },
  },
  {
    resourceId: "5b1f3c2e-7a41-4d6b-9c0e-000000000004",
    iban: "GE58SB0000000101904920",
    currency: "XXX",
    ownerName: "Nino Beridze",
    product: "Multicurrency account",
    cashAccountType: "CACC",
    name: "Multicurrency",
    balances: {
      GEL: ["1200.00", "1150.00"],
      USD: ["310.40", "310.40"],
      EUR: ["95.00", "80.00"],
    },
  },
  {
    resourceId: "5b1f3c2e-7a41-4d6b-9c0e-000000000005",
    iban: "GE33SB0000000202118301",
    currency: "GEL",
    ownerName: "Kartuli Tech LLC",
    product: "Business current account",
    cashAccountType: "CACC",
    name: "Business",
    balances: { GEL: ["48210.00", "47110.00"] },
  },
];

/** An account by resource id. */
export function findAccount(resourceId: string): SeedAccount | undefined {
  return ACCOUNTS.find((a) => a.resourceId === resourceId);
}

/** The Berlin Group balances of an account: closingBooked and expected per currency. */
export function accountBalances(account: SeedAccount) {
  return Object.entries(account.balances).flatMap(([currency, [booked, expected]]) => [
    {
      balanceType: "closingBooked",
      balanceAmount: { currency, amount: booked },
      referenceDate: BALANCE_DATE,
      lastChangeDateTime: `${BALANCE_DATE}T18:00:00+04:00`,
    },
    {
      balanceType: "expected",
      balanceAmount: { currency, amount: expected },
      referenceDate: BALANCE_DATE,
      lastChangeDateTime: `${BALANCE_DATE}T18:00:00+04:00`,
    },
  ]);
}
