/**
 * Test helpers for the sandbox bank: requests with JSON bodies, a movable clock and the common
 * consent flow.
 */
import assert from "node:assert/strict";
import type { Hono } from "hono";
import { createSandbox } from "../../src/sandbox/mod.ts";

/** A clock the test moves forward. */
export interface TestClock {
  now: Date;
  advanceDays(days: number): void;
}

/** A sandbox with a clock starting at `start` (default 2025-07-01T10:00:00Z). */
export function sandboxWithClock(start = "2025-07-01T10:00:00Z"): { app: Hono; clock: TestClock } {
  const clock: TestClock = {
    now: new Date(start),
    advanceDays(days) {
      clock.now = new Date(clock.now.getTime() + days * 24 * 60 * 60 * 1000);
    },
  };
  return { app: createSandbox({ now: () => clock.now }), clock };
}

/** Options of {@link send}. */
export interface SendOptions {
  method?: string;
  /** Sent as JSON (objects) or as is (strings). */
  body?: unknown;
  headers?: Record<string, string>;
}

/** Sends a request to the app; JSON bodies get `content-type: application/json`. */
export async function send(app: Hono, path: string, options: SendOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined;
  if (typeof options.body === "string") body = options.body;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  return await app.request(path, { method: options.method ?? "GET", headers, body });
}

/** Sends a request and returns status and parsed JSON body (`null` when empty). */
export async function sendJson(
  app: Hono,
  path: string,
  options: SendOptions = {},
  // deno-lint-ignore no-explicit-any
): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await send(app, path, options);
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

/** Asserts a Berlin Group error response with the given status and code. */
export async function assertError(
  res: Response | Promise<Response>,
  expected: { status: number; code: string },
) {
  const response = await res;
  assert.equal(response.status, expected.status);
  assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
  const body = await response.json();
  assert.equal(body.tppMessages.length, 1);
  assert.equal(body.tppMessages[0].category, "ERROR");
  assert.equal(body.tppMessages[0].code, expected.code);
  assert.equal(typeof body.tppMessages[0].text, "string");
  assert.equal(typeof body.tppMessages[0].path, "string");
}

/** A finalising PUT body (transaction authorisation). */
export const FINALISE = { scaAuthenticationData: "123456" };

/**
 * Creates a consent and finalises its implicit authorisation; returns the consent id.
 */
export async function validConsent(
  app: Hono,
  options: {
    access: Record<string, unknown>;
    psuId?: string;
    recurring?: boolean;
    validUntil?: string;
  },
): Promise<string> {
  const headers: Record<string, string> = { "PSU-IP-Address": "192.0.2.1" };
  if (options.psuId) headers["PSU-ID"] = options.psuId;
  const created = await sendJson(app, "/psd2/v1/consents", {
    method: "POST",
    headers,
    body: {
      access: options.access,
      recurringIndicator: options.recurring ?? true,
      validUntil: options.validUntil ?? "2025-12-31",
      frequencyPerDay: 4,
      combinedServiceIndicator: false,
    },
  });
  assert.equal(created.status, 201);
  const put = await sendJson(app, created.body._links.scaStatus.href, {
    method: "PUT",
    body: FINALISE,
  });
  assert.equal(put.body.scaStatus, "finalised");
  return created.body.consentId;
}
