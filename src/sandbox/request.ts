/**
 * Lenient request readers of the legacy core: JSON bodies, boolean headers and query values.
 *
 * The gateway validates strictly; the sandbox only refuses what it cannot work with, and never
 * lets odd input turn into a 500.
 */
import type { Context } from "hono";
import { formatError } from "./errors.ts";

/** A JSON object body. */
export type JsonObject = Record<string, unknown>;

/** Whether a value is a plain JSON object (not an array, not null). */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Reads the body as a JSON object; with `optional`, an empty body or `null` reads as `{}`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Hono } from "hono";
 * import { readJsonObject } from "./request.ts";
 *
 * const app = new Hono();
 * app.post("/", async (c) => c.json(await readJsonObject(c, { optional: true })));
 * const empty = await app.request("/", { method: "POST", body: "" });
 * assert.deepEqual(await empty.json(), {});
 * const sent = await app.request("/", { method: "POST", body: '{"a":1}' });
 * assert.deepEqual(await sent.json(), { a: 1 });
 * ```
 */
export async function readJsonObject(
  c: Context,
  options: { optional?: boolean } = {},
): Promise<JsonObject> {
  const text = await readText(c);
  if (text.trim() === "") {
    if (options.optional) return {};
    throw formatError("Request body must not be empty");
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw formatError("Request body is not valid JSON");
  }
  if (value === null && options.optional) return {};
  if (!isObject(value)) throw formatError("Request body must be a JSON object");
  return value;
}

/** Reads the raw body text; an unreadable body reads as empty. */
export async function readText(c: Context): Promise<string> {
  try {
    return await c.req.text();
  } catch {
    return "";
  }
}

/** Whether a header is sent with the value `true` (case-insensitive). */
export function headerIsTrue(c: Context, name: string): boolean {
  return (c.req.header(name) ?? "").trim().toLowerCase() === "true";
}

/** A header value with surrounding spaces removed; empty values read as `undefined`. */
export function headerValue(c: Context, name: string): string | undefined {
  const value = c.req.header(name)?.trim();
  return value ? value : undefined;
}
