/**
 * Requests with one to four arbitrary changes stacked: whatever the gateway does with them, it
 * never answers 5xx of its own, never hangs, always answers in Berlin Group form with the
 * X-Request-ID echoed, and what it forwards keeps the documented rules (checked here without the
 * gateway's code).
 */
import fc from "fast-check";
import { chaosRequest } from "../support/chaos.ts";
import { assertAnswerProperties, fuzzParameters, fuzzRig, runs } from "../support/fuzz.ts";
import { assertForwardedKeepsRules } from "../support/forwarded_rules.ts";

Deno.test("gateway answers arbitrarily changed requests safely and forwards only what keeps the rules", async () => {
  await using rig = await fuzzRig();
  await fc.assert(
    fc.asyncProperty(chaosRequest, async (request) => {
      const exchange = await rig.send(request);
      assertAnswerProperties(request, exchange);
      assertForwardedKeepsRules(request, exchange);
    }),
    fuzzParameters(runs(400), import.meta),
  );
});
