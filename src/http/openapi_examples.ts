/**
 * Example request bodies of the published contract, one per body form. Each passes the gateway's
 * own body rules (a conformance test sends every example through the gateway); dates are counted
 * from the day the document is built, so that "not in the past" holds.
 */

const DEBTOR = { iban: "DE89370400440532013000", currency: "EUR" };
const CREDITOR = { iban: "GB29NWBK60161331926819" };

/** A calendar date `days` after `today` (`YYYY-MM-DD`). */
function after(today: string, days: number): string {
  return new Date(Date.parse(`${today}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

function payment(): Record<string, unknown> {
  return {
    endToEndIdentification: "E2E-2025-0001",
    instructedAmount: { currency: "EUR", amount: "123.50" },
    creditorAccount: CREDITOR,
    creditorAgent: "AAAADEBBXXX",
    creditorName: "Merchant123",
    remittanceInformationUnstructured: "Ref Number Merchant",
  };
}

/** The JSON payment bodies, by payment-service. */
export function paymentExamples(today: string): Record<string, unknown> {
  return {
    payments: { debtorAccount: DEBTOR, ...payment(), requestedExecutionDate: after(today, 2) },
    "bulk-payments": {
      batchBookingPreferred: true,
      debtorAccount: DEBTOR,
      requestedExecutionDate: after(today, 2),
      payments: [payment(), { ...payment(), creditorName: "Other Merchant" }],
    },
    "periodic-payments": {
      debtorAccount: DEBTOR,
      ...payment(),
      startDate: after(today, 2),
      endDate: after(today, 367),
      executionRule: "following",
      frequency: "Monthly",
      dayOfExecution: "15",
    },
  };
}

/** The standing order part of a periodic pain.001 form. */
export function standingOrderExample(today: string): Record<string, unknown> {
  return {
    startDate: after(today, 2),
    frequency: "MonthlyVariable",
    monthsOfExecution: ["1", "4", "7", "10"],
    dayOfExecution: "1",
  };
}

/** A pain.001 document (one credit transfer). */
export const PAIN_001_EXAMPLE = `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.03">
  <CstmrCdtTrfInitn>
    <GrpHdr><MsgId>MSG-1</MsgId><CreDtTm>2025-01-01T10:00:00</CreDtTm><NbOfTxs>1</NbOfTxs>
      <InitgPty><Nm>Merchant123</Nm></InitgPty></GrpHdr>
    <PmtInf><PmtInfId>PMT-1</PmtInfId><PmtMtd>TRF</PmtMtd>
      <DbtrAcct><Id><IBAN>DE89370400440532013000</IBAN></Id></DbtrAcct>
      <CdtTrfTxInf><PmtId><EndToEndId>E2E-1</EndToEndId></PmtId>
        <Amt><InstdAmt Ccy="EUR">123.50</InstdAmt></Amt>
        <CdtrAcct><Id><IBAN>GB29NWBK60161331926819</IBAN></Id></CdtrAcct>
      </CdtTrfTxInf>
    </PmtInf>
  </CstmrCdtTrfInitn>
</Document>`;

/** A consent for balances and transactions of one account. */
export function consentExample(today: string): Record<string, unknown> {
  return {
    access: { balances: [{ iban: DEBTOR.iban }], transactions: [{ iban: DEBTOR.iban }] },
    recurringIndicator: true,
    validUntil: after(today, 90),
    frequencyPerDay: 4,
    combinedServiceIndicator: false,
  };
}

/** The authorisation bodies, by request type; `update` adds the PUT-only confirmation. */
export function authorisationExamples(update: boolean): Record<string, unknown> {
  return {
    updatePsuIdentification: {},
    updatePsuAuthentication: { psuData: { password: "start12" } },
    selectPsuAuthenticationMethod: { authenticationMethodId: "myAuthenticationID" },
    transactionAuthorisation: { scaAuthenticationData: "123456" },
    ...(update ? { authorisationConfirmation: { confirmationCode: "confirmation-7" } } : {}),
  };
}

/** A checkout order. */
export function checkoutOrderExample(): Record<string, unknown> {
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

/** A confirmation of funds: the official example's fields, with an IBAN whose check digits hold. */
export function fundsConfirmationExample(): Record<string, unknown> {
  return {
    cardNumber: "12345678901234",
    account: { iban: DEBTOR.iban },
    instructedAmount: { currency: "EUR", amount: "123" },
  };
}

/** A signing basket: the official example's two payment ids. */
export function signingBasketExample(): Record<string, unknown> {
  return { paymentIds: ["123qwert456789", "12345qwert7899"] };
}
