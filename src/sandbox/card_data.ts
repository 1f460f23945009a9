/**
 * Deterministic seed card accounts of the sandbox bank, held by the test user PSU-CARD, with their
 * balances and card transactions (Berlin Group 1.3.11 `cardAccountDetails`, `cardTransaction`).
 *
 * Per card: 12 booked entries, every 15 days from 2025-01-04 (transactionDate; booked the next
 * day), and 2 pending entries without bookingDate (transactionDate 2025-06-28 and 2025-06-30). Ids
 * are the masked PAN's last four digits plus `-CB01`..`-CB12` and `-CP01`..`-CP02`.
 */
import { addDays, isoDate } from "./dates.ts";

/** A sandbox amount. */
export interface SeedAmount {
  currency: string;
  amount: string;
}

/** A card account as the core stores it. */
export interface SeedCard {
  resourceId: string;
  maskedPan: string;
  currency: string;
  ownerName: string;
  name: string;
  product: string;
  creditLimit: SeedAmount;
  /** Balances: [interimBooked, nonInvoiced] (the amounts owed, as the card statement shows them). */
  balances: [string, string];
}

/** A card transaction (Berlin Group `cardTransaction` fields). */
export interface SeedCardTransaction {
  cardTransactionId: string;
  terminalId: string;
  transactionDate: string;
  bookingDate?: string;
  transactionAmount: SeedAmount;
  originalAmount?: SeedAmount;
  cardAcceptorId: string;
  cardAcceptorAddress: { townName: string; country: string };
  merchantCategoryCode: string;
  maskedPAN: string;
  transactionDetails: string;
  invoiced: boolean;
}

/** Seed card transactions of one card, by booking status. */
export interface CardTransactions {
  booked: SeedCardTransaction[];
  pending: SeedCardTransaction[];
}

/** Day the seed card balances refer to. */
export const CARD_BALANCE_DATE = "2025-06-30";

/** Every card account of the sandbox bank (all held by PSU-CARD). */
export const CARDS: readonly SeedCard[] = [
  {
    resourceId: "7c2e9a41-3b5d-4f08-a6e1-00000000c001",
    maskedPan: "525412******3241",
    currency: "GEL",
    ownerName: "Nino Beridze",
    name: "Credit card",
    product: "Mastercard Gold",
    creditLimit: { currency: "GEL", amount: "5000.00" },
    balances: ["1432.60", "418.35"],
  },
  {
    resourceId: "7c2e9a41-3b5d-4f08-a6e1-00000000c002",
    maskedPan: "403211******0042",
    currency: "USD",
    ownerName: "Nino Beridze",
    name: "Travel card",
    product: "Visa Classic",
    creditLimit: { currency: "USD", amount: "1500.00" },
    balances: ["212.40", "64.10"],
  },
];

const MERCHANTS = [
  { id: "NIKORA-0042", name: "Nikora Supermarket", town: "Tbilisi", mcc: "5411" },
  { id: "WISSOL-0117", name: "Wissol Petrol", town: "Tbilisi", mcc: "5541" },
  { id: "ENTREE-0007", name: "Entree Bakery", town: "Batumi", mcc: "5812" },
  { id: "GEOAIR-0001", name: "Georgian Airways", town: "Tbilisi", mcc: "4511" },
];

const FIRST_PURCHASE = new Date("2025-01-04T00:00:00Z");

/** A card account by resource id. */
export function findCard(resourceId: string): SeedCard | undefined {
  return CARDS.find((card) => card.resourceId === resourceId);
}

/** The seed card transactions of every card, by resource id. */
export const CARD_TRANSACTIONS: ReadonlyMap<string, CardTransactions> = new Map(
  CARDS.map((card, k) => [card.resourceId, seedTransactions(card, k)]),
);

/** The Berlin Group balances of a card account: interimBooked and nonInvoiced. */
export function cardBalances(card: SeedCard) {
  const [booked, nonInvoiced] = card.balances;
  return [
    {
      balanceType: "interimBooked",
      balanceAmount: { currency: card.currency, amount: booked },
      referenceDate: CARD_BALANCE_DATE,
    },
    {
      balanceType: "nonInvoiced",
      balanceAmount: { currency: card.currency, amount: nonInvoiced },
      referenceDate: CARD_BALANCE_DATE,
    },
  ];
}

function seedTransactions(card: SeedCard, k: number): CardTransactions {
  const tag = card.maskedPan.slice(-4);
  const booked = Array.from({ length: 12 }, (_, i) => {
    const date = addDays(FIRST_PURCHASE, 15 * i);
    const entry = entryOf(card, { i, k, id: `${tag}-CB${pad(i + 1)}`, date: isoDate(date) });
    // Entries of the last two months are not on a statement yet.
    return { ...entry, bookingDate: isoDate(addDays(date, 1)), invoiced: i < 8 };
  });
  const pending = ["2025-06-28", "2025-06-30"].map((date, j) =>
    entryOf(card, { i: 2 * j + 1, k: k + 1, id: `${tag}-CP${pad(j + 1)}`, date })
  );
  return { booked, pending };
}

function entryOf(
  card: SeedCard,
  options: { i: number; k: number; id: string; date: string },
): SeedCardTransaction {
  const { i, k, id, date } = options;
  const merchant = MERCHANTS[(i + k) % MERCHANTS.length];
  const cents = 300 + ((i + 1) * 6113 + k * 2707) % 18000;
  const amount = `-${Math.floor(cents / 100)}.${pad(cents % 100)}`;
  return {
    cardTransactionId: id,
    terminalId: `T-${merchant.id}`,
    transactionDate: date,
    transactionAmount: { currency: card.currency, amount },
    cardAcceptorId: merchant.id,
    cardAcceptorAddress: { townName: merchant.town, country: "GE" },
    merchantCategoryCode: merchant.mcc,
    maskedPAN: card.maskedPan,
    transactionDetails: merchant.name,
    invoiced: false,
  };
}

function pad(n: number): string {
  return String(n).padStart(2, "0");
}
