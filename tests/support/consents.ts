/**
 * Consents created through a test gateway: the POST /v1/consents every consent test starts with,
 * and the terms of a recurring consent the scope tests give it.
 */
import assert from "node:assert/strict";
import type { TestGateway } from "./gateway.ts";

/** The last day of next year: a consent valid for the whole test run. */
export const NEXT_YEAR = `${new Date().getUTCFullYear() + 1}-12-31`;

/** A recurring consent's terms (4 reads a day, valid until {@link NEXT_YEAR}), `body` over them. */
export function recurringConsent(body: Record<string, unknown>): Record<string, unknown> {
  return {
    recurringIndicator: true,
    frequencyPerDay: 4,
    validUntil: NEXT_YEAR,
    combinedServiceIndicator: false,
    ...body,
  };
}

/**
 * Creates a consent of `body` with `headers` and a fresh X-Request-ID; asserts it was created (201)
 * and returns its id.
 */
export async function createConsentWith(
  gateway: TestGateway,
  headers: Record<string, string>,
  body: Record<string, unknown>,
): Promise<string> {
  const response = await gateway.fetch("/v1/consents", {
    method: "POST",
    headers: { ...headers, "x-request-id": crypto.randomUUID() },
    body: JSON.stringify(body),
  });
  assert.equal(response.status, 201);
  return (await response.json()).consentId as string;
}
