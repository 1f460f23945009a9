/**
 * Requests changed once in a way whose outcome the documents pin down are rejected with the
 * documented status, code and `path` and never reach the upstream (or, for a header the
 * interface says may be ignored, forwarded without it); every answer has the properties every
 * answer must have.
 */
import fc from "fast-check";
import { CERTAIN, certainMutation } from "../support/mutations.ts";
import {
  assertAnswerProperties,
  assertExpectation,
  fuzzParameters,
  fuzzRig,
  runs,
} from "../support/fuzz.ts";

const NAMES = Object.keys(CERTAIN);
const PER_MUTATION = Math.ceil(runs(700) / NAMES.length);

Deno.test("gateway rejects each certain mutation as documented and forwards none", async (t) => {
  await using rig = await fuzzRig();
  for (const name of NAMES) {
    // Large bodies cost time: a few of them are enough.
    const numRuns = name === "bodyTooLarge" ? Math.min(PER_MUTATION, 5) : PER_MUTATION;
    await t.step(name, async () => {
      await fc.assert(
        fc.asyncProperty(certainMutation([name]), async (request) => {
          const exchange = await rig.send(request);
          assertAnswerProperties(request, exchange);
          assertExpectation(request, exchange);
        }),
        fuzzParameters(numRuns, import.meta),
      );
    });
  }
});
