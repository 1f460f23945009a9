/**
 * The `tppMessages` of a success answer as the official Berlin Group OpenAPI file (1.3.11, the
 * file adorsys XS2A ships) types them: its `tppMessageGeneric`, used by the 2xx answers of a
 * payment's status and read, a cancellation, an SCA status, the start of an authorisation and a
 * consent's creation, types `code` as the message category, so a client generated from that file
 * takes only `ERROR` or `WARNING` there and fails on `FUNDS_NOT_AVAILABLE`. In the `official` form a message with another
 * code keeps its category, takes the category as its code and carries the code in its text:
 * `{"category":"ERROR","code":"ERROR","text":"FUNDS_NOT_AVAILABLE: Insufficient funds ..."}`.
 */

/**
 * The operations whose success answer the official file gives `tppMessageGeneric` messages
 * (`paymentInitiationStatusResponse-200_json`, `paymentInitiationWithStatusResponse` and its
 * periodic and bulk forms, `paymentInitiationCancelResponse-202`, `scaStatusResponse`,
 * `startScaprocessResponse`, `consentsResponse-201`). A payment initiation's 201 has its own codes
 * (`MessageCode201PaymentInitiation`), and the account reads carry no messages.
 */
export const GENERIC_MESSAGE_OPERATIONS: ReadonlySet<string> = new Set([
  "getPaymentInitiationStatus",
  "getPaymentInformation",
  "cancelPayment",
  "getPaymentInitiationScaStatus",
  "getPaymentCancellationScaStatus",
  "getConsentScaStatus",
  "startPaymentAuthorisation",
  "startPaymentInitiationCancellationAuthorisation",
  "startConsentAuthorisation",
  "createConsent",
]);

/** The codes the official file allows in a success answer's message. */
const OFFICIAL_CODES: ReadonlySet<string> = new Set(["ERROR", "WARNING"]);

/** The standard's longest message text (tppMessageText). */
const MAX_TEXT = 500;

type Json = Record<string, unknown>;

/** The body with its messages in the official form; undefined when it already is. */
export function officialSuccessMessages(body: unknown): Json | undefined {
  if (!body || typeof body !== "object" || Array.isArray(body)) return undefined;
  const messages = (body as Json).tppMessages;
  if (!Array.isArray(messages)) return undefined;
  let changed = false;
  const official = messages.map((message) => {
    if (!message || typeof message !== "object") return message;
    const { code, text } = message as Json;
    if (typeof code !== "string" || OFFICIAL_CODES.has(code)) return message;
    changed = true;
    const category = (message as Json).category === "WARNING" ? "WARNING" : "ERROR";
    const said = typeof text === "string" && text !== "" ? `${code}: ${text}` : code;
    return { ...message, category, code: category, text: said.slice(0, MAX_TEXT) };
  });
  return changed ? { ...(body as Json), tppMessages: official } : undefined;
}
