/**
 * The deterministic product table of the sandbox catalogue: one row per product, with its name
 * in Georgian (`ge`) and English (`en`) and the numbers its record is built from.
 *
 * 29 products: 6 TERM_DEPOSITS, 6 PERS_LOANS, 6 CRED_AND_CHRG_CARDS, 5 BUSINESS_LOANS,
 * 3 RESIDENTIAL_MORTGAGES, 3 TRANS_AND_SAVINGS_ACCS.
 */

/** Product categories of the catalogue. */
export const CATEGORIES = [
  "TERM_DEPOSITS",
  "PERS_LOANS",
  "CRED_AND_CHRG_CARDS",
  "BUSINESS_LOANS",
  "RESIDENTIAL_MORTGAGES",
  "TRANS_AND_SAVINGS_ACCS",
] as const;
export type Category = typeof CATEGORIES[number];

/** One row of the product table. */
export interface ProductSpec {
  id: string;
  category: Category;
  /** Name in Georgian and in English. */
  name: readonly [string, string];
  currency: string;
  /** Interest rate in percent (deposit or lending); 0 when none applies. */
  rate: number;
  /** Deposit period, or longest loan term, in months; 0 when none applies. */
  months: number;
  /** Smallest and largest amount (opening balance, loan or card limit). */
  min: number;
  max: number;
  /** Sub-brand shown on some loans. */
  brandName?: string;
  isTailored?: boolean;
}

function row(
  id: string,
  category: Category,
  spec: Omit<ProductSpec, "id" | "category">,
): ProductSpec {
  return { id, category, ...spec };
}

const TD = "TERM_DEPOSITS";
const PL = "PERS_LOANS";
const CC = "CRED_AND_CHRG_CARDS";
const BL = "BUSINESS_LOANS";
const RM = "RESIDENTIAL_MORTGAGES";
const TS = "TRANS_AND_SAVINGS_ACCS";

/** Every product, in catalogue order. */
export const PRODUCT_SPECS: readonly ProductSpec[] = [
  row("td-gel-6", TD, {
    name: ["ვადიანი ანაბარი 6 თვე", "Term deposit 6 months"],
    currency: "GEL",
    rate: 9.5,
    months: 6,
    min: 500,
    max: 1000000,
  }),
  row("td-gel-12", TD, {
    name: ["ვადიანი ანაბარი 12 თვე", "Term deposit 12 months"],
    currency: "GEL",
    rate: 10.25,
    months: 12,
    min: 500,
    max: 1000000,
  }),
  row("td-gel-24", TD, {
    name: ["ვადიანი ანაბარი 24 თვე", "Term deposit 24 months"],
    currency: "GEL",
    rate: 10.75,
    months: 24,
    min: 500,
    max: 1000000,
  }),
  row("td-usd-12", TD, {
    name: ["დოლარის ანაბარი 12 თვე", "US dollar deposit 12 months"],
    currency: "USD",
    rate: 3,
    months: 12,
    min: 200,
    max: 500000,
  }),
  row("td-eur-12", TD, {
    name: ["ევროს ანაბარი 12 თვე", "Euro deposit 12 months"],
    currency: "EUR",
    rate: 1.5,
    months: 12,
    min: 200,
    max: 500000,
  }),
  row("td-kids-gel", TD, {
    name: ["საბავშვო ანაბარი", "Children's deposit"],
    currency: "GEL",
    rate: 9,
    months: 60,
    min: 50,
    max: 100000,
    isTailored: true,
  }),
  row("pl-consumer-gel", PL, {
    name: ["სამომხმარებლო სესხი", "Consumer loan"],
    currency: "GEL",
    rate: 18,
    months: 60,
    min: 500,
    max: 50000,
  }),
  row("pl-express-gel", PL, {
    name: ["ექსპრეს სესხი", "Express loan"],
    currency: "GEL",
    rate: 24,
    months: 24,
    min: 100,
    max: 5000,
    brandName: "Express",
  }),
  row("pl-car-gel", PL, {
    name: ["ავტო სესხი", "Car loan"],
    currency: "GEL",
    rate: 14,
    months: 72,
    min: 3000,
    max: 150000,
  }),
  row("pl-car-usd", PL, {
    name: ["ავტო სესხი დოლარში", "Car loan in US dollars"],
    currency: "USD",
    rate: 9,
    months: 72,
    min: 1000,
    max: 60000,
  }),
  row("pl-education-gel", PL, {
    name: ["საგანმანათლებლო სესხი", "Education loan"],
    currency: "GEL",
    rate: 12,
    months: 48,
    min: 500,
    max: 30000,
  }),
  row("pl-gold-gel", PL, {
    name: ["ოქროს ლომბარდის სესხი", "Gold pawn loan"],
    currency: "GEL",
    rate: 20,
    months: 12,
    min: 100,
    max: 20000,
    brandName: "Gold",
  }),
  row("card-classic-credit", CC, {
    name: ["კლასიკური საკრედიტო ბარათი", "Classic credit card"],
    currency: "GEL",
    rate: 26,
    months: 0,
    min: 300,
    max: 5000,
  }),
  row("card-gold-credit", CC, {
    name: ["ოქროს საკრედიტო ბარათი", "Gold credit card"],
    currency: "GEL",
    rate: 24,
    months: 0,
    min: 1000,
    max: 15000,
  }),
  row("card-platinum-credit", CC, {
    name: ["პლატინის საკრედიტო ბარათი", "Platinum credit card"],
    currency: "GEL",
    rate: 22,
    months: 0,
    min: 3000,
    max: 30000,
    isTailored: true,
  }),
  row("card-visa-debit", CC, {
    name: ["Visa სადებეტო ბარათი", "Visa debit card"],
    currency: "GEL",
    rate: 0,
    months: 0,
    min: 0,
    max: 0,
  }),
  row("card-mastercard-debit", CC, {
    name: ["Mastercard სადებეტო ბარათი", "Mastercard debit card"],
    currency: "GEL",
    rate: 0,
    months: 0,
    min: 0,
    max: 0,
  }),
  row("card-student", CC, {
    name: ["სტუდენტური ბარათი", "Student card"],
    currency: "GEL",
    rate: 28,
    months: 0,
    min: 100,
    max: 1000,
  }),
  row("bl-working-capital-gel", BL, {
    name: ["საბრუნავი კაპიტალის სესხი", "Working capital loan"],
    currency: "GEL",
    rate: 15,
    months: 36,
    min: 5000,
    max: 500000,
  }),
  row("bl-investment-gel", BL, {
    name: ["საინვესტიციო სესხი", "Investment loan"],
    currency: "GEL",
    rate: 13,
    months: 120,
    min: 20000,
    max: 2000000,
  }),
  row("bl-investment-usd", BL, {
    name: ["საინვესტიციო სესხი დოლარში", "Investment loan in US dollars"],
    currency: "USD",
    rate: 9.5,
    months: 120,
    min: 10000,
    max: 1000000,
  }),
  row("bl-overdraft-gel", BL, {
    name: ["ბიზნეს ოვერდრაფტი", "Business overdraft"],
    currency: "GEL",
    rate: 17,
    months: 12,
    min: 1000,
    max: 100000,
  }),
  row("bl-agro-gel", BL, {
    name: ["აგრო სესხი", "Agricultural loan"],
    currency: "GEL",
    rate: 11,
    months: 60,
    min: 5000,
    max: 300000,
    brandName: "Agro",
  }),
  row("rm-gel", RM, {
    name: ["იპოთეკური სესხი", "Mortgage loan"],
    currency: "GEL",
    rate: 12.5,
    months: 240,
    min: 20000,
    max: 1500000,
  }),
  row("rm-usd", RM, {
    name: ["იპოთეკური სესხი დოლარში", "Mortgage loan in US dollars"],
    currency: "USD",
    rate: 8.5,
    months: 240,
    min: 10000,
    max: 600000,
  }),
  row("rm-new-build-gel", RM, {
    name: ["იპოთეკა ახალ მშენებლობაზე", "New build mortgage"],
    currency: "GEL",
    rate: 11.5,
    months: 180,
    min: 20000,
    max: 1000000,
  }),
  row("acc-current-gel", TS, {
    name: ["მიმდინარე ანგარიში", "Current account"],
    currency: "GEL",
    rate: 0,
    months: 0,
    min: 0,
    max: 0,
  }),
  row("acc-savings-gel", TS, {
    name: ["შემნახველი ანგარიში", "Savings account"],
    currency: "GEL",
    rate: 6,
    months: 0,
    min: 0,
    max: 0,
  }),
  row("acc-multicurrency", TS, {
    name: ["მულტივალუტური ანგარიში", "Multicurrency account"],
    currency: "XXX",
    rate: 0,
    months: 0,
    min: 0,
    max: 0,
  }),
];
