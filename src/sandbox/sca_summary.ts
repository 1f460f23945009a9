/**
 * What the PSU is asked to authorise, as label and value rows for the SCA page: the payment
 * (amount, creditor, accounts, reference), the payment to cancel, or the consent (accounts and
 * the access to each, validity, frequency).
 */
import { isObject, type JsonObject } from "./request.ts";
import type { Texts } from "./sca_texts.ts";
import type { Consent, Payment, Subject } from "./state.ts";

/** One row of the summary. */
export interface SummaryRow {
  label: string;
  value: string;
}

/** The rows describing the subject of an authorisation. */
export function summaryRows(subject: Subject, t: Texts): SummaryRow[] {
  if (subject.kind === "consent") return consentRows(subject.consent, t);
  return paymentRows(subject.payment, t);
}

function paymentRows(payment: Payment, t: Texts): SummaryRow[] {
  const product = { label: t.product, value: `${payment.service} / ${payment.product}` };
  if (typeof payment.body === "string") return [{ label: t.xmlPayment, value: "" }, product];
  const body = payment.body;
  const rows: SummaryRow[] = [];
  const push = (label: string, value: string | undefined) => {
    if (value) rows.push({ label, value });
  };
  if (Array.isArray(body.payments)) {
    const items = body.payments.filter(isObject);
    push(t.payments, String(items.length));
    push(t.total, totals(items.map((item) => item.instructedAmount)));
    push(t.creditor, items.map((item) => text(item.creditorName)).filter(Boolean).join(", "));
  } else {
    push(t.amount, totals([body.instructedAmount]));
    push(t.creditor, text(body.creditorName));
    push(t.creditorAccount, accountText(body.creditorAccount));
    push(t.reference, text(body.remittanceInformationUnstructured));
    push(t.frequency, text(body.frequency));
    push(t.startDate, text(body.startDate));
  }
  push(t.debtorAccount, accountText(body.debtorAccount));
  rows.push(product);
  return rows;
}

function consentRows(consent: Consent, t: Texts): SummaryRow[] {
  return [
    { label: t.accounts, value: accessText(consent.access, t) },
    { label: t.validUntil, value: consent.validUntil },
    { label: t.frequencyPerDay, value: String(consent.frequencyPerDay) },
    { label: t.recurring, value: consent.recurringIndicator ? t.yes : t.no },
  ];
}

/** The access of a consent: one line per account with what is granted on it. */
function accessText(access: JsonObject, t: Texts): string {
  const ALL = ["allAccounts", "allAccountsWithOwnerName"];
  if (ALL.includes(String(access.allPsd2))) return t.allAccounts;
  const grants = new Map<string, string[]>();
  const kinds: [string, string][] = [
    ["accounts", t.details],
    ["balances", t.balances],
    ["transactions", t.transactions],
  ];
  for (const [field, label] of kinds) {
    const refs = Array.isArray(access[field]) ? access[field] as unknown[] : [];
    for (const ref of refs) {
      const account = accountText(ref);
      if (!account) continue;
      const list = grants.get(account) ?? [];
      if (!list.includes(label)) list.push(label);
      grants.set(account, list);
    }
  }
  const lines = [...grants].map(([account, list]) => `${account}: ${list.join(", ")}`);
  if (ALL.includes(String(access.availableAccountsWithBalance))) {
    lines.push(t.accountListBalances);
  } else if (ALL.includes(String(access.availableAccounts))) lines.push(t.accountList);
  return lines.join("\n");
}

/** Amounts added up per currency: "125.50 GEL", or "10.00 GEL + 5.00 EUR". */
function totals(amounts: unknown[]): string | undefined {
  const [only] = amounts;
  if (amounts.length === 1 && isObject(only) && text(only.amount)) {
    return `${text(only.amount)} ${text(only.currency) ?? ""}`.trim();
  }
  const sums = new Map<string, number>();
  for (const amount of amounts) {
    if (!isObject(amount)) continue;
    const value = Number(amount.amount);
    const currency = text(amount.currency) ?? "";
    if (Number.isFinite(value)) sums.set(currency, (sums.get(currency) ?? 0) + value);
  }
  if (sums.size === 0) return undefined;
  return [...sums].map(([currency, sum]) => `${sum.toFixed(2)} ${currency}`.trim()).join(" + ");
}

/** An account reference as the PSU knows it (IBAN first). */
function accountText(ref: unknown): string | undefined {
  if (!isObject(ref)) return undefined;
  const other = isObject(ref.other) ? text(ref.other.identification) : undefined;
  const id = text(ref.iban) ?? text(ref.bban) ?? text(ref.maskedPan) ?? text(ref.pan) ??
    text(ref.msisdn) ?? other;
  if (!id) return undefined;
  const currency = text(ref.currency);
  return currency ? `${id} (${currency})` : id;
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}
