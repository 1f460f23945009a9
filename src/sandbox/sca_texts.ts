/**
 * Texts of the SCA page in English and Georgian, and the choice between them: `?lang=` first,
 * then the best of `en` and `ka` in `Accept-Language` (by q-value), English by default.
 */
import type { Behaviour } from "./test_users.ts";

/** A language of the SCA page. */
export type Lang = "en" | "ka";

/** Every text of the SCA page. */
export interface Texts {
  bank: string;
  testBanner: string;
  titlePayment: string;
  titleCancellation: string;
  titleConsent: string;
  amount: string;
  creditor: string;
  creditorAccount: string;
  debtorAccount: string;
  reference: string;
  product: string;
  payments: string;
  total: string;
  frequency: string;
  startDate: string;
  xmlPayment: string;
  accounts: string;
  validUntil: string;
  frequencyPerDay: string;
  recurring: string;
  yes: string;
  no: string;
  allAccounts: string;
  accountList: string;
  accountListBalances: string;
  details: string;
  balances: string;
  transactions: string;
  loginHeading: string;
  psuId: string;
  password: string;
  login: string;
  missingCredentials: string;
  otpHeading: string;
  otpSent: string;
  otp: string;
  approve: string;
  deny: string;
  /** The account picker of a bank-offered consent. */
  chooseAccounts: string;
  noAccountChosen: string;
  confirmationCode: string;
  wrongOtp: (attemptsLeft: number) => string;
  testUsers: string;
  testUsersHint: string;
  behaviours: Record<Behaviour, string>;
  finalised: string;
  failed: string;
  closeWindow: string;
  unknownLink: string;
  expiredForm: string;
}

const EN: Texts = {
  bank: "Sandbox Bank",
  testBanner: "Test environment: no real money moves",
  titlePayment: "Authorise payment",
  titleCancellation: "Authorise payment cancellation",
  titleConsent: "Authorise account access",
  amount: "Amount",
  creditor: "Creditor",
  creditorAccount: "Creditor account",
  debtorAccount: "Debtor account",
  reference: "Reference",
  product: "Payment product",
  payments: "Payments",
  total: "Total",
  frequency: "Frequency",
  startDate: "First execution",
  xmlPayment: "Payment order in pain.001 XML",
  accounts: "Accounts and access",
  validUntil: "Valid until",
  frequencyPerDay: "Accesses per day",
  recurring: "Recurring access",
  yes: "Yes",
  no: "No",
  allAccounts: "All accounts: details, balances and transactions",
  accountList: "List of accounts",
  accountListBalances: "List of accounts with balances",
  details: "details",
  balances: "balances",
  transactions: "transactions",
  loginHeading: "Log in",
  psuId: "User ID",
  password: "Password",
  login: "Log in",
  missingCredentials: "Enter your user ID and password",
  otpHeading: "Confirm with a one-time code",
  otpSent: "We sent a code by SMS to +995 5** *** 117. In the sandbox the code is 123456.",
  otp: "One-time code",
  approve: "Approve",
  deny: "Deny",
  chooseAccounts: "Accounts to share with the provider",
  noAccountChosen: "Choose at least one account",
  confirmationCode: "The provider confirms with the code",
  wrongOtp: (n) => `The code is wrong. Attempts left: ${n}`,
  testUsers: "Test users",
  testUsersHint: "Any password works. Any other user ID behaves like PSU-OK.",
  behaviours: {
    succeeds: "SCA succeeds",
    failsSca: "Every code is wrong",
    noFunds: "Payment rejected: insufficient funds",
    multilevel: "Payments need two authorisations",
    expiredConsent: "Consents expire at once",
    cardHolder: "Holds two card accounts",
  },
  finalised: "The authorisation is finalised.",
  failed: "The authorisation has failed.",
  closeWindow: "You can close this window and return to the provider.",
  unknownLink: "This link is unknown. Start again from the provider's page.",
  expiredForm: "This form has expired. Open the link from the provider again.",
};

const KA: Texts = {
  bank: "სენდბოქს ბანკი",
  testBanner: "სატესტო გარემო: რეალური თანხა არ გადაირიცხება",
  titlePayment: "გადახდის დადასტურება",
  titleCancellation: "გადახდის გაუქმების დადასტურება",
  titleConsent: "ანგარიშებზე წვდომის დადასტურება",
  amount: "თანხა",
  creditor: "მიმღები",
  creditorAccount: "მიმღების ანგარიში",
  debtorAccount: "გადამხდელის ანგარიში",
  reference: "დანიშნულება",
  product: "გადახდის სახე",
  payments: "გადახდები",
  total: "ჯამი",
  frequency: "სიხშირე",
  startDate: "პირველი შესრულება",
  xmlPayment: "საგადახდო დავალება pain.001 XML ფორმატში",
  accounts: "ანგარიშები და წვდომა",
  validUntil: "მოქმედების ვადა",
  frequencyPerDay: "წვდომა დღეში",
  recurring: "განმეორებადი წვდომა",
  yes: "დიახ",
  no: "არა",
  allAccounts: "ყველა ანგარიში: მონაცემები, ნაშთები და ტრანზაქციები",
  accountList: "ანგარიშების სია",
  accountListBalances: "ანგარიშების სია ნაშთებით",
  details: "მონაცემები",
  balances: "ნაშთები",
  transactions: "ტრანზაქციები",
  loginHeading: "შესვლა",
  psuId: "მომხმარებლის ID",
  password: "პაროლი",
  login: "შესვლა",
  missingCredentials: "შეიყვანეთ მომხმარებლის ID და პაროლი",
  otpHeading: "დაადასტურეთ ერთჯერადი კოდით",
  otpSent: "კოდი გამოგზავნილია SMS-ით ნომერზე +995 5** *** 117. სატესტო კოდია 123456.",
  otp: "ერთჯერადი კოდი",
  approve: "დადასტურება",
  deny: "უარყოფა",
  chooseAccounts: "ანგარიშები, რომლებსაც პროვაიდერს უზიარებთ",
  noAccountChosen: "აირჩიეთ მინიმუმ ერთი ანგარიში",
  confirmationCode: "პროვაიდერი ადასტურებს კოდით",
  wrongOtp: (n) => `კოდი არასწორია. დარჩენილი მცდელობა: ${n}`,
  testUsers: "სატესტო მომხმარებლები",
  testUsersHint: "ნებისმიერი პაროლი მიიღება. სხვა ID იქცევა ისე, როგორც PSU-OK.",
  behaviours: {
    succeeds: "ავტორიზაცია წარმატებულია",
    failsSca: "ყველა კოდი არასწორია",
    noFunds: "გადახდა უარყოფილია: არასაკმარისი თანხა",
    multilevel: "გადახდას ორი ავტორიზაცია სჭირდება",
    expiredConsent: "თანხმობის ვადა მაშინვე იწურება",
    cardHolder: "აქვს ორი ბარათის ანგარიში",
  },
  finalised: "ავტორიზაცია დასრულებულია.",
  failed: "ავტორიზაცია ვერ შესრულდა.",
  closeWindow: "შეგიძლიათ დახუროთ ფანჯარა და დაბრუნდეთ პროვაიდერთან.",
  unknownLink: "ბმული უცნობია. დაიწყეთ თავიდან პროვაიდერის გვერდიდან.",
  expiredForm: "ფორმის ვადა ამოიწურა. გახსენით ბმული პროვაიდერიდან თავიდან.",
};

/** The texts of a language. */
export function textsOf(lang: Lang): Texts {
  return lang === "ka" ? KA : EN;
}

/** `en` or `ka` when the value names one, else `undefined`. */
export function langOf(value: string | undefined): Lang | undefined {
  return value === "en" || value === "ka" ? value : undefined;
}

/**
 * The better of `en` and `ka` for an `Accept-Language` header (`ka-GE` counts as `ka`, `*` as
 * English); English when it names neither.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { pickLanguage } from "./sca_texts.ts";
 *
 * assert.equal(pickLanguage("ka-GE,ka;q=0.9,en;q=0.5"), "ka");
 * assert.equal(pickLanguage("de"), "en");
 * ```
 */
export function pickLanguage(header: string | undefined): Lang {
  let best: { lang: Lang; q: number } = { lang: "en", q: 0 };
  for (const part of (header ?? "").split(",")) {
    const [range, ...params] = part.trim().toLowerCase().split(";");
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (!Number.isFinite(q) || q <= 0) continue;
    const primary = range.split("-")[0];
    const lang = primary === "ka" ? "ka" : primary === "en" || primary === "*" ? "en" : undefined;
    if (lang && q > best.q) best = { lang, q };
  }
  return best.lang;
}
