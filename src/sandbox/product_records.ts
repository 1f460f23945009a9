/**
 * Product records of the catalogue (001 record fields), built from the product table in either
 * locale: `ge` (Georgian texts) or `en`.
 */
import { type Category, PRODUCT_SPECS, type ProductSpec } from "./product_specs.ts";

/** Locales of the catalogue texts. */
export const LOCALES = ["ge", "en"] as const;
export type Locale = typeof LOCALES[number];

/** A product record as the catalogue returns it. */
export type ProductRecord = Record<string, unknown> & {
  productId: string;
  productCategory: Category;
};

const ORIGIN = "https://sandbox-bank.example";

/** Texts per locale: [ge, en]. */
const TEXT = {
  brand: ["სენდბოქს ბანკი", "Sandbox Bank"],
  deposit: ["ფიქსირებული განაკვეთის ანაბარი", "Fixed rate deposit"],
  loan: ["სესხი", "Loan"],
  mortgage: ["იპოთეკური სესხი", "Mortgage loan"],
  card: ["ბარათი", "Card"],
  account: ["ანგარიში", "Account"],
  currency: ["ვალუტა", "currency"],
  months: ["თვე", "months"],
  interestMonthly: ["პროცენტი ირიცხება ყოველთვიურად", "Interest is paid monthly"],
  earlyRepayment: ["ვადაზე ადრე დაფარვა უფასოა", "Early repayment is free of charge"],
  freeWithdrawals: ["უფასო განაღდება თვეში", "Free cash withdrawals per month"],
  partnerDiscounts: ["ფასდაკლებები პარტნიორ მაღაზიებში", "Discounts at partner shops"],
  freeTransfers: ["უფასო გადარიცხვები ბანკის შიგნით", "Free transfers within the bank"],
  minLimit: ["მინიმალური თანხა", "Minimum amount"],
  maxLimit: ["მაქსიმალური თანხა", "Maximum amount"],
  openingBalance: ["მინიმალური საწყისი შენატანი", "Minimum opening balance"],
  maxAge: ["მსესხებლის მაქსიმალური ასაკი", "Maximum age of the borrower"],
  residency: ["საქართველოს რეზიდენტი", "Resident of Georgia"],
  business: ["რეგისტრირებული საწარმო", "Registered business"],
  issuanceFee: ["სესხის გაცემის საკომისიო", "Loan issuance fee"],
  earlyWithdrawal: ["ვადამდე გატანის საკომისიო", "Early withdrawal fee"],
  annualFee: ["წლიური მომსახურების საკომისიო", "Annual service fee"],
  cashFee: ["განაღდების საკომისიო", "Cash withdrawal fee"],
  monthlyFee: ["ყოველთვიური მომსახურების საკომისიო", "Monthly service fee"],
  fixedRate: ["ფიქსირებული განაკვეთი", "Fixed rate"],
  floatingRate: ["ცვლადი განაკვეთი", "Floating rate"],
  tier: ["ვადის მიხედვით", "By period"],
} as const;

/** Every product record per locale, in catalogue order. */
export const PRODUCTS: Readonly<Record<Locale, readonly ProductRecord[]>> = {
  ge: PRODUCT_SPECS.map((spec) => productRecord(spec, "ge")),
  en: PRODUCT_SPECS.map((spec) => productRecord(spec, "en")),
};

/** The record of one product in one locale. */
export function productRecord(spec: ProductSpec, locale: Locale): ProductRecord {
  const t = (key: keyof typeof TEXT) => TEXT[key][locale === "ge" ? 0 : 1];
  const record: ProductRecord = {
    productId: spec.id,
    effectiveFrom: "2024-01-01T00:00:00+04:00",
    lastUpdated: "2025-05-01T09:00:00+04:00",
    productCategory: spec.category,
    name: spec.name[locale === "ge" ? 0 : 1],
    description: description(spec, t),
    brand: t("brand"),
    ...(spec.brandName ? { brandName: spec.brandName } : {}),
    isTailored: spec.isTailored ?? false,
    features: features(spec, t),
    constraints: constraints(spec, t),
    eligibility: eligibility(spec, t),
    fees: fees(spec, t),
  };
  if (isLending(spec)) record.lendingRates = lendingRates(spec, t);
  if (
    spec.category === "TERM_DEPOSITS" || spec.rate > 0 && spec.category === "TRANS_AND_SAVINGS_ACCS"
  ) {
    record.depositRates = depositRates(spec, t);
  }
  if (spec.category === "CRED_AND_CHRG_CARDS") {
    const base = `${ORIGIN}/${locale}/cards/${spec.id}`;
    record.additionalInformation = {
      eligibilityUri: `${base}/eligibility`,
      feesAndPricingUri: `${base}/fees`,
      overviewUri: base,
    };
    record.cardArt = { title: record.name, imageUri: `${ORIGIN}/img/cards/${spec.id}.png` };
  }
  return record;
}

type Text = (key: keyof typeof TEXT) => string;

function isLending(spec: ProductSpec): boolean {
  return ["PERS_LOANS", "BUSINESS_LOANS", "RESIDENTIAL_MORTGAGES"].includes(spec.category) ||
    spec.category === "CRED_AND_CHRG_CARDS" && spec.rate > 0;
}

function description(spec: ProductSpec, t: Text): string {
  const what = {
    TERM_DEPOSITS: t("deposit"),
    PERS_LOANS: t("loan"),
    BUSINESS_LOANS: t("loan"),
    RESIDENTIAL_MORTGAGES: t("mortgage"),
    CRED_AND_CHRG_CARDS: t("card"),
    TRANS_AND_SAVINGS_ACCS: t("account"),
  }[spec.category];
  const term = spec.months > 0 ? `, ${spec.months} ${t("months")}` : "";
  return `${what}, ${t("currency")} ${spec.currency}${term}`;
}

function features(spec: ProductSpec, t: Text) {
  const feature = (
    featureType: string,
    additionalInfo: string,
    additionalValue: string | null,
  ) => ({
    featureType,
    additionalValue,
    additionalInfo,
    additionalInfoUri: `${ORIGIN}/products/${spec.id}`,
  });
  switch (spec.category) {
    case "CRED_AND_CHRG_CARDS":
      return [
        feature("FREE_TXNS_ALLOWANCE", t("freeWithdrawals"), "5"),
        feature("COMPLEMENTARY_PRODUCT_DISCOUNTS", t("partnerDiscounts"), null),
      ];
    case "TRANS_AND_SAVINGS_ACCS":
      return [feature("FREE_TXNS_ALLOWANCE", t("freeTransfers"), null)];
    case "TERM_DEPOSITS":
      return [feature("OTHER", t("interestMonthly"), null)];
    default:
      return [feature("OTHER", t("earlyRepayment"), null)];
  }
}

function constraints(spec: ProductSpec, t: Text) {
  if (spec.max === 0) return [];
  const limit = (constraintType: string, value: number, info: string) => ({
    constraintType,
    additionalValue: String(value),
    additionalInfo: `${info}, ${spec.currency}`,
  });
  if (spec.category === "TERM_DEPOSITS") {
    return [
      limit("OPENING_BALANCE", spec.min, t("openingBalance")),
      limit("MAX_LIMIT", spec.max, t("maxLimit")),
    ];
  }
  return [limit("MIN_LIMIT", spec.min, t("minLimit")), limit("MAX_LIMIT", spec.max, t("maxLimit"))];
}

function eligibility(spec: ProductSpec, t: Text) {
  const residency = {
    eligibilityType: "RESIDENCY_STATUS",
    additionalValue: "GE",
    additionalInfo: t("residency"),
  };
  if (spec.category === "BUSINESS_LOANS") {
    return [{
      eligibilityType: "BUSINESS",
      additionalValue: "true",
      additionalInfo: t("business"),
    }];
  }
  if (isLending(spec)) {
    return [
      { eligibilityType: "MAX_AGE", additionalValue: "70", additionalInfo: t("maxAge") },
      residency,
    ];
  }
  return [residency];
}

function fees(spec: ProductSpec, t: Text) {
  const base = { currency: spec.currency === "XXX" ? "GEL" : spec.currency };
  switch (spec.category) {
    case "TERM_DEPOSITS":
      return [{
        name: t("earlyWithdrawal"),
        feeType: "EVENT",
        ...base,
        additionalInfo: t("earlyWithdrawal"),
        balanceRate: 1,
      }];
    case "CRED_AND_CHRG_CARDS":
      return [
        {
          name: t("annualFee"),
          feeType: "PERIODIC",
          ...base,
          additionalInfo: "P1Y",
          amount: spec.rate > 0 ? 50 : 10,
        },
        {
          name: t("cashFee"),
          feeType: "WITHDRAWAL",
          ...base,
          additionalInfo: t("cashFee"),
          transactionRate: 2,
        },
      ];
    case "TRANS_AND_SAVINGS_ACCS":
      return [{
        name: t("monthlyFee"),
        feeType: "PERIODIC",
        ...base,
        additionalInfo: "P1M",
        amount: 1.5,
      }];
    default:
      return [{
        name: t("issuanceFee"),
        feeType: "UPFRONT",
        ...base,
        additionalInfo: t("issuanceFee"),
        balanceRate: 1,
      }];
  }
}

function lendingRates(spec: ProductSpec, t: Text) {
  const floating = spec.category === "RESIDENTIAL_MORTGAGES" && spec.currency === "USD";
  return [{
    lendingRateType: floating ? "FLOATING" : "FIXED",
    rate: spec.rate,
    comparisonRate: (spec.rate + 1.5).toFixed(2),
    calculationFrequency: "P1D",
    interestPaymentDue: "IN_ARREARS",
    repaymentType: "PRINCIPAL_AND_INTEREST",
    loanPurpose: "INVESTMENT",
    applicationFrequency: "P1M",
    additionalValue: spec.months > 0 ? `P${spec.months}M` : "P1Y",
    additionalInfo: floating ? t("floatingRate") : t("fixedRate"),
  }];
}

function depositRates(spec: ProductSpec, t: Text) {
  const days = spec.months > 0 ? spec.months * 30 : 365;
  return [{
    depositRateType: "FIXED",
    rate: spec.rate,
    comparisonRate: Math.round((spec.rate - 0.25) * 100) / 100,
    tiers: [{
      name: null,
      unitOfMeasure: "DAY",
      minimumValue: days,
      maximumValue: days,
      additionalInfo: t("tier"),
    }],
  }];
}
