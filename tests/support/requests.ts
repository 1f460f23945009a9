/**
 * Requests that pass every request-hardening rule, for tests of any area: headers and bodies of a
 * well-behaved TPP. Tests change one thing at a time from these.
 */

/** A valid X-Request-ID. */
export const REQUEST_ID = "99391c7e-ad88-49ec-a2ad-99ddcb1f7721";

/** IBANs with valid check digits. */
export const IBAN = {
  debtor: "DE89370400440532013000",
  creditor: "GB29NWBK60161331926819",
  georgian: "GE29NB0000000101904917",
};

/** Headers of a payment initiation or consent creation (JSON, PSU-IP-Address given). */
export function initiationHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return {
    "x-request-id": REQUEST_ID,
    "psu-ip-address": "192.168.8.78",
    "content-type": "application/json",
    ...extra,
  };
}

/** A valid single payment body. */
export function singlePayment(): Record<string, unknown> {
  return {
    endToEndIdentification: "E2E-2025-0001",
    debtorAccount: { iban: IBAN.debtor, currency: "EUR" },
    instructedAmount: { currency: "EUR", amount: "123.50" },
    creditorAccount: { iban: IBAN.creditor },
    creditorAgent: "AAAADEBBXXX",
    creditorName: "Merchant123",
    creditorAddress: {
      streetName: "Rustaveli Ave",
      buildingnNumber: "7",
      townName: "Tbilisi",
      country: "GE",
    },
    remittanceInformationUnstructured: "Ref Number Merchant",
  };
}

/** A date `days` from today (UTC), as `YYYY-MM-DD`. */
export function dayFromToday(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}

/** A valid consent body. */
export function consentBody(): Record<string, unknown> {
  return {
    access: {
      balances: [{ iban: IBAN.debtor }],
      transactions: [{ iban: IBAN.debtor }],
    },
    recurringIndicator: true,
    validUntil: dayFromToday(90),
    frequencyPerDay: 4,
    combinedServiceIndicator: false,
  };
}

/** A valid checkout order body. */
export function checkoutOrderBody(): Record<string, unknown> {
  return {
    intent: "CAPTURE",
    items: [{ amount: "10.50", description: "Tea", quantity: 2, product_id: "tea-1" }],
    locale: "ka",
    shop_order_id: "order-77",
    redirect_url: "https://shop.example/return",
    capture_method: "AUTOMATIC",
    purchase_units: [{ amount: { currency_code: "GEL", value: 21 } }],
  };
}

/** A well-formed pain.001 document. */
export const PAIN_001 = `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.03">
  <CstmrCdtTrfInitn>
    <GrpHdr><MsgId>MSG-1</MsgId><NbOfTxs>1</NbOfTxs></GrpHdr>
    <PmtInf><PmtInfId>P-1</PmtInfId><CdtTrfTxInf><Amt><InstdAmt Ccy="EUR">12.00</InstdAmt></Amt>
    <RmtInf><Ustrd>A &amp; B</Ustrd></RmtInf></CdtTrfTxInf></PmtInf>
  </CstmrCdtTrfInitn>
</Document>
`;
