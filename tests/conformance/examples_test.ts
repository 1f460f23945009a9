/**
 * Conformance of the published contract's examples: every example request body of the document
 * the gateway serves passes the gateway's own body rules (it reaches the bank) and fits the
 * document's schema for it.
 */
import assert from "node:assert/strict";
import { type Outcome, policy, rig } from "../support/hardening.ts";
import { Contract } from "./contract.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const OFFERED = [
  "domestic",
  "sepa-credit-transfers",
  "pain.001-sepa-credit-transfers",
  "pain.001-instant-sepa-credit-transfers",
] as const;

/** A concrete path of a template: ids for parameters, the example's service and product. */
function concrete(template: string, values: Record<string, string>): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => values[name] ?? "id-1");
}

/** A multipart body of the form's example (the part names and media types of the document). */
function formBody(example: Json, encoding: Json, boundary: string): string {
  return Object.entries(example).map(([name, value]) =>
    `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n` +
    `Content-Type: ${String(encoding[name].contentType).split(",")[0].trim()}\r\n\r\n` +
    `${typeof value === "string" ? value : JSON.stringify(value)}\r\n`
  ).join("") + `--${boundary}--\r\n`;
}

Deno.test("every example request body of /openapi.json passes the gateway's body rules", async () => {
  await using t = await rig(policy({ path_params: { offered_products: [...OFFERED] } }));
  const contract = await Contract.of(t.gateway);
  let sent = 0;
  for (const [template, item] of Object.entries(contract.document.paths) as [string, Json][]) {
    for (const [method, entry] of Object.entries(item) as [string, Json][]) {
      const content = entry.requestBody?.content ?? {};
      for (const [media, type] of Object.entries(content) as [string, Json][]) {
        for (const [name, example] of Object.entries(type.examples ?? {}) as [string, Json][]) {
          const where = `${entry.operationId} ${media} "${name}"`;
          const service = media === "multipart/form-data" ? "periodic-payments" : name;
          const product = media === "application/json" ? "domestic" : OFFERED[2];
          const path = concrete(template, {
            "payment-service": ["payments", "bulk-payments", "periodic-payments"].includes(service)
              ? service
              : "payments",
            "payment-product": product,
          });
          const boundary = "example-boundary-1";
          const headers: Record<string, string> = {
            "x-request-id": crypto.randomUUID(),
            "psu-ip-address": "192.0.2.17",
            "content-type": media === "multipart/form-data"
              ? `${media}; boundary=${boundary}`
              : media,
            authorization: "Bearer token",
          };
          const body = media === "multipart/form-data"
            ? formBody(example.value, type.encoding, boundary)
            : typeof example.value === "string"
            ? example.value
            : JSON.stringify(example.value);
          // The example fits the document's own schema (a form's parts: the JSON part).
          if (media === "application/json") {
            assert.deepEqual(contract.problems(type.schema, example.value), [], where);
          }
          const outcome: Outcome = await t.call(path, {
            method: method.toUpperCase(),
            headers,
            body,
          });
          assert.equal(outcome.status, 200, `${where}: ${JSON.stringify(outcome.body)}`);
          sent++;
        }
      }
    }
  }
  assert.equal(t.upstream.received.length, sent, "every example reached the bank");
  // Payments (3 JSON, XML, form), consent, 4 starts x 4 and 4 updates x 5 authorisations (payment,
  // cancellation, consent, signing basket), checkout, confirmation of funds, signing basket.
  assert.equal(sent, 5 + 1 + 4 * 4 + 4 * 5 + 1 + 1 + 1);
});
