/**
 * Helpers for end-to-end flows: a TPP client of the gateway that sends well-formed requests
 * (a fresh X-Request-ID each time, the headers the interface asks for), parses answers and holds
 * each to the gateway's published contract (`/openapi.json`).
 */
import assert from "node:assert/strict";
import type { TestGateway } from "../support/gateway.ts";
import { contractOf } from "../conformance/contract.ts";

/** A PSU's address as the TPP forwards it. */
export const PSU_IP = "192.0.2.17";

/** An answer: status, headers and the parsed JSON body (undefined when empty). */
export interface Answer {
  status: number;
  headers: Headers;
  // deno-lint-ignore no-explicit-any
  body: any;
}

/** Calls the gateway as a TPP would. */
export async function call(
  gateway: TestGateway,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {
    "x-request-id": crypto.randomUUID(),
    ...options.headers,
  };
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const response = await gateway.fetch(path, { method, headers, body });
  const text = await response.text();
  assert.equal(response.headers.get("x-request-id"), headers["x-request-id"], "X-Request-ID echo");
  assert.equal(response.headers.get("server"), null, "the core's Server header is hidden");
  const answer = {
    status: response.status,
    headers: response.headers,
    body: text ? JSON.parse(text) : undefined,
  };
  // Every answer of a flow fits the contract the gateway publishes (tests/conformance).
  (await contractOf(gateway)).assertAnswer(method, path, answer);
  return answer;
}

/** Asserts that every href under _links is public (no legacy prefix, no upstream host). */
export function assertPublicLinks(body: unknown, upstream?: string) {
  const hrefs = JSON.stringify(body ?? {}).match(/"href":"[^"]*"/g) ?? [];
  for (const href of hrefs) {
    assert.doesNotMatch(href, /\/psd2\/v1/, href);
    if (upstream) assert.ok(!href.includes(upstream), href);
  }
}
