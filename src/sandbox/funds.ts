/**
 * The confirmation of funds of the legacy core (Berlin Group 1.3.11 PIIS,
 * `checkAvailabilityOfFunds`): whether the account the TPP names holds the instructed amount, read
 * from the sandbox accounts' expected balance in the amount's currency (no conversion: an account
 * without a balance in that currency has no funds in it).
 *
 * The account is named by IBAN, by BBAN (the IBAN without country and check digits) or by
 * `other.identification` (its resource id); an account the bank does not hold is 400
 * RESOURCE_UNKNOWN on `account`, as the standard answers an unknown resource addressed in the
 * payload. Consent-ID, when sent, is not looked up: the sandbox holds no PIIS consents.
 */
import type { Hono } from "hono";
import { ACCOUNTS, type SeedAccount } from "./data.ts";
import { formatError, SandboxError } from "./errors.ts";
import { isObject, type JsonObject, readJsonObject } from "./request.ts";
import { FUNDS_TEST_ACCOUNTS } from "./test_users.ts";

/** The account of the test user PSU-NO-FUNDS: known to the funds check only, with nothing on it. */
export const NO_FUNDS_ACCOUNT: SeedAccount = {
  resourceId: "5b1f3c2e-7a41-4d6b-9c0e-000000000f00",
  iban: FUNDS_TEST_ACCOUNTS[1].iban,
  currency: "GEL",
  ownerName: "Giorgi Kapanadze",
  product: "Current account",
  cashAccountType: "CACC",
  name: "Empty account",
  balances: { GEL: ["0.00", "0.00"] },
};

const HELD: readonly SeedAccount[] = [...ACCOUNTS, NO_FUNDS_ACCOUNT];

/** An amount as a count of thousandths (the interface allows three decimals), or undefined. */
export function thousandths(amount: unknown): bigint | undefined {
  if (typeof amount !== "string") return undefined;
  const match = /^(-?)(\d{1,14})(?:\.(\d{1,3}))?$/.exec(amount.trim());
  if (!match) return undefined;
  const value = BigInt(match[2]) * 1000n + BigInt((match[3] ?? "").padEnd(3, "0"));
  return match[1] ? -value : value;
}

/** The account the reference names, or undefined. */
export function referencedAccount(reference: JsonObject): SeedAccount | undefined {
  const text = (value: unknown) =>
    typeof value === "string" ? value.replace(/\s+/g, "").toUpperCase() : undefined;
  const iban = text(reference.iban);
  const bban = text(reference.bban);
  const other = isObject(reference.other) ? text(reference.other.identification) : undefined;
  const account = HELD.find((held) =>
    held.iban === iban || held.iban.slice(4) === bban || held.resourceId.toUpperCase() === other
  );
  const currency = text(reference.currency);
  // A currency in the reference addresses that currency's sub-account of a multicurrency one.
  if (account && currency !== undefined && !(currency in account.balances)) return undefined;
  return account;
}

/** Whether the account's expected balance in the amount's currency covers the amount. */
export function fundsAvailable(account: SeedAccount, amount: bigint, currency: string): boolean {
  const balance = account.balances[currency];
  if (balance === undefined) return false;
  return amount <= (thousandths(balance[1]) ?? 0n);
}

/** Mounts `POST /v1/funds-confirmations` on the app. */
export function mountFunds(app: Hono) {
  app.post("/psd2/v1/funds-confirmations", async (c) => {
    const body = await readJsonObject(c);
    if (!isObject(body.account)) throw formatError("The account is required", "account");
    const instructed = body.instructedAmount;
    const amount = isObject(instructed) ? thousandths(instructed.amount) : undefined;
    if (!isObject(instructed) || amount === undefined || typeof instructed.currency !== "string") {
      throw formatError(
        "The instructed amount must have a currency and an amount",
        "instructedAmount",
      );
    }
    const account = referencedAccount(body.account);
    if (!account) {
      throw new SandboxError(400, "RESOURCE_UNKNOWN", {
        text: "The account is unknown to the bank",
        path: "account",
      });
    }
    return c.json({ fundsAvailable: fundsAvailable(account, amount, instructed.currency) });
  });
}
