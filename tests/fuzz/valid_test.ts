/**
 * Valid requests for every operation of the catalogue reach the upstream unchanged: same method,
 * the operation's upstream path and query, the exact body bytes, every interface header as sent;
 * and the answer has every property an answer must have.
 */
import fc from "fast-check";
import { OPERATIONS } from "../../src/psd2/catalogue.ts";
import { forwarded, validRequest } from "../support/arbitraries.ts";
import {
  assertAnswerProperties,
  assertExpectation,
  fuzzParameters,
  fuzzRig,
  runs,
} from "../support/fuzz.ts";
import type { FuzzRequest } from "../support/arbitraries.ts";

const PER_OPERATION = Math.ceil(runs(450) / OPERATIONS.length);

Deno.test("gateway forwards generated valid requests of every operation unchanged", async () => {
  await using rig = await fuzzRig();
  // Consents the gateway learnt from the core's answers: their TPP-initiated reads are counted
  // (consent_frequency), so a read may be refused with 429 ACCESS_EXCEEDED.
  const learnt = new Set<string>();
  const psuInitiated = (r: FuzzRequest) => r.headers.some(([n]) => n === "psu-ip-address");
  for (const op of OPERATIONS) {
    await fc.assert(
      fc.asyncProperty(validRequest(op), async (valid) => {
        const request = forwarded(valid);
        const consent = valid.headers.find(([n]) => n === "consent-id")?.[1];
        if (op.group === "ais" && consent && learnt.has(consent) && !psuInitiated(request)) {
          request.expect = {
            kind: "forwardOr",
            upstreamPath: (request.expect as { upstreamPath: string }).upstreamPath,
            status: 429,
            code: "ACCESS_EXCEEDED",
            path: "Consent-ID",
          };
        }
        const exchange = await rig.send(request);
        if (op.id === "getConsentInformation" && exchange.reached.length === 1) {
          learnt.add(valid.params.consentId);
        }
        if (op.id === "deleteConsent" && exchange.reached.length === 1) {
          learnt.delete(valid.params.consentId);
        }
        assertAnswerProperties(request, exchange);
        assertExpectation(request, exchange);
      }),
      fuzzParameters(PER_OPERATION, import.meta),
    );
  }
});
