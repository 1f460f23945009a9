/**
 * Deterministic seed transactions of every sandbox account.
 *
 * Per account: 12 booked entries, every 15 days from 2025-01-05 to 2025-06-19 (even ones
 * outgoing, odd ones incoming), 2 pending entries without bookingDate (valueDate 2025-06-28 and
 * 2025-06-30) and 1 standing order (the `information` list). Ids are the last four IBAN digits
 * plus `-B01`..`-B12`, `-P01`..`-P02` and `-I01`.
 */
import { ACCOUNTS, type SeedAccount } from "./data.ts";
import { addDays, isoDate } from "./dates.ts";

/** A transaction list entry (Berlin Group fields). */
export interface SeedTransaction {
  transactionId: string;
  creditorName?: string;
  creditorAccount?: { iban: string };
  debtorName?: string;
  debtorAccount?: { iban: string };
  transactionAmount: { currency: string; amount: string };
  bookingDate?: string;
  valueDate: string;
  remittanceInformationUnstructured: string;
}

/** Seed entries of one account, by booking status. */
export interface AccountTransactions {
  booked: SeedTransaction[];
  pending: SeedTransaction[];
  information: Record<string, unknown>[];
}

const COUNTERPARTIES = [
  { name: "Magti LLC", iban: "GE40TB7745036010100001", text: "Mobile services" },
  { name: "Nikora Supermarket", iban: "GE09BG0000000512340001", text: "Groceries" },
  { name: "Giorgi Kapanadze", iban: "GE74TB1234567890123456", text: "Shared dinner" },
  { name: "Tbilisi Energy", iban: "GE53BG0000000887766554", text: "Electricity bill" },
];

const FIRST_BOOKING = new Date("2025-01-05T00:00:00Z");

/** The seed transactions of every account, by resource id. */
export const TRANSACTIONS: ReadonlyMap<string, AccountTransactions> = new Map(
  ACCOUNTS.map((account, k) => [account.resourceId, seedTransactions(account, k)]),
);

function seedTransactions(account: SeedAccount, k: number): AccountTransactions {
  const tag = account.iban.slice(-4);
  const booked = Array.from({ length: 12 }, (_, i) => {
    const date = isoDate(addDays(FIRST_BOOKING, 15 * i));
    const entry = entryOf(account, { i, k, id: `${tag}-B${pad(i + 1)}`, date });
    return { ...entry, bookingDate: date };
  });
  const pending = ["2025-06-28", "2025-06-30"].map((date, j) =>
    entryOf(account, { i: 2 * j, k: k + 1, id: `${tag}-P${pad(j + 1)}`, date })
  );
  const rent = COUNTERPARTIES[3 - (k % 4)];
  const information = [{
    transactionId: `${tag}-I01`,
    creditorName: rent.name,
    creditorAccount: { iban: rent.iban },
    transactionAmount: { currency: currencyOf(account, 0), amount: "-150.00" },
    remittanceInformationUnstructured: "Standing order",
    additionalInformationStructured: {
      standingOrderDetails: { startDate: "2025-01-05", frequency: "Monthly", dayOfExecution: "5" },
    },
  }];
  return { booked, pending, information };
}

function entryOf(
  account: SeedAccount,
  options: { i: number; k: number; id: string; date: string },
): SeedTransaction {
  const { i, k, id, date } = options;
  const party = COUNTERPARTIES[(i + k) % COUNTERPARTIES.length];
  const tetri = 500 + ((i + 1) * 7919 + k * 3301) % 45000;
  const amount = `${Math.floor(tetri / 100)}.${pad(tetri % 100)}`;
  const transactionAmount = { currency: currencyOf(account, i), amount };
  const common = { transactionId: id, valueDate: date };
  if (i % 2 === 0) {
    return {
      ...common,
      creditorName: party.name,
      creditorAccount: { iban: party.iban },
      transactionAmount: { ...transactionAmount, amount: `-${amount}` },
      remittanceInformationUnstructured: party.text,
    };
  }
  return {
    ...common,
    debtorName: party.name,
    debtorAccount: { iban: party.iban },
    transactionAmount,
    remittanceInformationUnstructured: `Transfer from ${party.name}`,
  };
}

function currencyOf(account: SeedAccount, i: number): string {
  return account.currency === "XXX" ? ["GEL", "USD", "EUR"][i % 3] : account.currency;
}

function pad(n: number): string {
  return String(n).padStart(2, "0");
}
