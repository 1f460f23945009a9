/**
 * Signed payments under a policy that trusts a CA: sequences of requests by two TPPs (one in a
 * tier), some tampered with after signing, some sent again, against three rate limits at once.
 * Each answer is the one the model of the documents expects: the documented refusal, the first
 * answer replayed, 429 with the longest wait of the limits used up, or forwarded unchanged with
 * the tightest limit's RateLimit headers.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  assertAnswerProperties,
  assertExpectation,
  fuzzParameters,
  fuzzRig,
  runs,
} from "../support/fuzz.ts";
import {
  Model,
  type SentRequest,
  signedPki,
  signedPolicy,
  signedRequest,
  signedSteps,
} from "../support/signed_fuzz.ts";

const pki = await signedPki();
const policy = signedPolicy(pki);
/** About FUZZ_RUNS requests: sequences average about seven. */
const SEQUENCES = Math.ceil(runs(240) / 7);

Deno.test("gateway verifies signed payments and applies tiers, several limits at once and replay as documented", async () => {
  await fc.assert(
    fc.asyncProperty(signedSteps, async (steps) => {
      await using rig = await fuzzRig(policy);
      const model = new Model();
      const sent: SentRequest[] = [];
      for (const step of steps) {
        let current: SentRequest;
        if (step.kind === "send") {
          // Bodies end in a space, so that a repeat can change one without changing its length.
          const body = step.valid.body === undefined ? undefined : `${step.valid.body} `;
          current = await signedRequest(pki, { ...step, id: crypto.randomUUID() }, body);
        } else {
          const first = sent[step.of % sent.length];
          const caller = step.otherCaller
            ? (first.caller === "gold" ? "standard" : "gold")
            : first.caller;
          const body = step.changed && first.body !== undefined
            ? `${first.body.slice(0, -1)}${first.body.endsWith(" ") ? "\n" : " "}`
            : first.body;
          const same = caller === first.caller && body === first.body;
          current = same
            ? { ...first, request: { ...first.request } }
            : await signedRequest(pki, { ...first, caller }, body);
          current.request.mutation = `${first.request.mutation}; sent again${
            caller === first.caller ? "" : ` by ${caller}`
          }${body === first.body ? "" : " with another body"}`;
        }
        sent.push(current);
        const expected = model.next(current);
        current.request.expect = expected.expect;
        const exchange = await rig.send(current.request);
        assertAnswerProperties(current.request, exchange);
        assertExpectation(current.request, exchange);
        if (expected.retryAfter) {
          const retry = Number(exchange.answer.headers.get("retry-after"));
          const [min, max] = expected.retryAfter;
          assert.ok(
            retry >= min && retry <= max,
            `Retry-After ${retry}, expected ${min} to ${max}\n${current.request.mutation}`,
          );
        }
        if (expected.expect.kind === "forward") {
          model.answered(current, exchange.answer.status, exchange.answer.body);
        }
      }
    }),
    fuzzParameters(SEQUENCES, import.meta),
  );
});
