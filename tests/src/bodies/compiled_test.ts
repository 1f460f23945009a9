/**
 * `body_schema` checks bodies with zod's compiled validator (`z.compile`) and asks the runtime
 * parser only for an invalid body's issue. The compiler hands a schema it cannot model back
 * uncompiled, silently; and a wrong "valid" from it would let a body through unchecked. So: every
 * body schema compiles, and on valid bodies and on bodies changed at one field the compiled
 * schema and the runtime parser agree.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { z } from "zod";
import {
  bulkPayment,
  periodicPayment,
  singlePayment,
  standingOrder,
} from "../../../src/bodies/payment.ts";
import { consent } from "../../../src/bodies/consent.ts";
import { authorisation } from "../../../src/bodies/authorisation.ts";
import { checkoutOrder } from "../../../src/bodies/checkout_order.ts";
import { fundsConfirmation } from "../../../src/bodies/funds_confirmation.ts";
import { signingBasket } from "../../../src/bodies/signing_basket.ts";
import { phrase } from "../../../src/bodies/issues.ts";
import type { BodyOptions } from "../../../src/bodies/text.ts";
import { earliestToday } from "../../../src/lib/dates.ts";
import { type Operation, OPERATIONS } from "../../../src/psd2/catalogue.ts";
import { isPain, validRequest } from "../../support/arbitraries.ts";
import { fuzzParameters, runs } from "../../support/fuzz.ts";

const today = () => earliestToday(Date.now());

function schemas(options: BodyOptions): Record<string, z.ZodType> {
  return {
    payments: singlePayment(options, today),
    "bulk-payments": bulkPayment(options, today),
    "periodic-payments": periodicPayment(options, today),
    standingOrder: standingOrder(options, today),
    consent: consent(options, today),
    checkoutOrder: checkoutOrder(options),
    fundsConfirmation: fundsConfirmation(options),
    signingBasket: signingBasket(options),
    authorisation: authorisation(options, false),
    authorisationUpdate: authorisation(options, true),
  };
}

const VARIANTS: BodyOptions[] = [
  { unknown: "reject", charset: "interface", maxBulk: 1000, allowHttp: false },
  { unknown: "forward", charset: "off", maxBulk: 3, allowHttp: true },
  { unknown: "reject", charset: "latin", maxBulk: 10, allowHttp: false },
  { unknown: "reject", charset: "unicode", maxBulk: 10, allowHttp: false },
];

Deno.test("every body schema compiles with z.compile (none falls back to the runtime parser)", () => {
  for (const options of VARIANTS) {
    for (const [name, schema] of Object.entries(schemas(options))) {
      assert.doesNotThrow(
        () => z.compile(schema, { strict: true }),
        `${name} ${JSON.stringify(options)}`,
      );
    }
  }
});

/** The schema a JSON body of `op` is checked with, as `body_schema` picks it. */
function schemaName(op: Operation, params: Record<string, string>): string {
  if (op.body === "payment") return params["payment-service"];
  return op.body;
}

const JSON_OPERATIONS = OPERATIONS.filter((op) => op.body !== "none");
const RUNTIME = schemas(VARIANTS[0]);
const COMPILED = Object.fromEntries(
  Object.entries(RUNTIME).map(([name, schema]) => [name, z.compile(schema)]),
);

/** A copy of `value` with the field at a path chosen by `pick` replaced or removed. */
function changed(value: unknown, pick: number[], replacement: unknown, remove: boolean): unknown {
  const copy = structuredClone(value);
  let holder: unknown = copy;
  for (let depth = 0;; depth++) {
    if (holder === null || typeof holder !== "object") return replacement;
    const keys = Object.keys(holder);
    if (keys.length === 0) return copy;
    const key = keys[pick[depth % pick.length] % keys.length];
    const inner = (holder as Record<string, unknown>)[key];
    const deeper = inner !== null && typeof inner === "object" && pick[depth % pick.length] % 3 > 0;
    if (!deeper || depth >= 6) {
      if (remove && !Array.isArray(holder)) delete (holder as Record<string, unknown>)[key];
      else (holder as Record<string, unknown>)[key] = replacement;
      return copy;
    }
    holder = inner;
  }
}

Deno.test("the compiled body schemas and the runtime parser agree on valid and changed bodies", () => {
  let valid = 0;
  let invalid = 0;
  const body = fc.constantFrom(...JSON_OPERATIONS).chain((op) =>
    validRequest(op).filter((v) => v.json !== undefined && v.json !== null && !isPain(v.params))
  );
  fc.assert(
    fc.property(
      body,
      fc.array(fc.nat(), { minLength: 1, maxLength: 6 }),
      fc.oneof(
        fc.jsonValue({ maxDepth: 2 }),
        fc.constantFrom("", "x", "DE89370400440532013000", 0),
      ),
      fc.boolean(),
      fc.boolean(),
      (request, pick, replacement, remove, untouched) => {
        const name = schemaName(request.op, request.params);
        const value = untouched ? request.json : changed(request.json, pick, replacement, remove);
        const runtime = RUNTIME[name].safeParse(value, { error: phrase });
        const compiled = COMPILED[name];
        assert.equal(compiled.validate(value), runtime.success, `${name} ${JSON.stringify(value)}`);
        if (runtime.success) {
          valid++;
          assert.deepEqual(compiled.parse(value), runtime.data);
        } else {
          invalid++;
          const again = compiled.safeParse(value, { error: phrase });
          assert.deepEqual(again.error?.issues[0], runtime.error.issues[0]);
        }
      },
    ),
    fuzzParameters(runs(1500), import.meta),
  );
  // Both sides were exercised.
  assert.ok(valid > 50 && invalid > 50, `valid ${valid}, invalid ${invalid}`);
});
