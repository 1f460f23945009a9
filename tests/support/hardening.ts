/**
 * Helpers for request-hardening tests: a policy in front of a recording upstream, a call that
 * returns the Berlin Group message, and the assertion that a rejection never reached the bank.
 */
import assert from "node:assert/strict";
import { gatewayApp, type TestGateway } from "./gateway.ts";
import { startUpstream, type TestUpstream } from "./upstream.ts";
import { buildPolicy, type LevelInput, type PolicyInput } from "./policies.ts";

/**
 * A policy: the upstream, these `defaults` and further parts over them (see `buildPolicy`). The
 * idempotency check is off unless `defaults` sets it: these tests send one X-Request-ID many times.
 */
export function policy(defaults: LevelInput = {}, ...parts: PolicyInput[]): PolicyInput {
  const off: LevelInput = "idempotency" in defaults ? {} : { idempotency: { mode: "off" } };
  return buildPolicy({
    upstream: { url: "${UPSTREAM_URL}", prefix: "/psd2/v1" },
    defaults: { ...off, ...defaults },
  }, ...parts);
}

/** A gateway with the given policy in front of a recording upstream. */
export interface Rig extends AsyncDisposable {
  gateway: TestGateway;
  upstream: TestUpstream;
  /** Calls the gateway; resolves with status, headers and the first tppMessage (if any). */
  call(path: string, init?: RequestInit): Promise<Outcome>;
}

/** What a call returned. */
export interface Outcome {
  status: number;
  headers: Headers;
  body: unknown;
  code?: string;
  path?: string;
  text?: string;
}

/**
 * Starts a gateway with `policy` in front of a fresh recording upstream, answered in-process
 * through the app's `fetch` (its `url` listens on first use, for raw requests).
 */
export async function rig(policy: PolicyInput | string): Promise<Rig> {
  const upstream = startUpstream();
  const gateway = await gatewayApp({ policy, upstream: upstream.url });
  return {
    gateway,
    upstream,
    async call(path, init) {
      const response = await gateway.fetch(path, init);
      const text = await response.text();
      const body = text ? JSON.parse(text) : undefined;
      const message = (body as { tppMessages?: Record<string, string>[] })?.tppMessages?.[0];
      return {
        status: response.status,
        headers: response.headers,
        body,
        code: message?.code,
        path: message?.path,
        text: message?.text,
      };
    },
    async [Symbol.asyncDispose]() {
      await gateway.close();
      await upstream.close();
    },
  };
}

/** Asserts a Berlin Group rejection and that the upstream saw nothing new. */
export function assertRejected(
  outcome: Outcome,
  expected: { status: number; code: string; path?: string; text?: RegExp },
  upstream: TestUpstream,
  before = 0,
): void {
  const where = JSON.stringify(outcome.body);
  assert.equal(outcome.status, expected.status, where);
  assert.equal(outcome.code, expected.code, where);
  if (expected.path !== undefined) assert.equal(outcome.path, expected.path, where);
  if (expected.text) assert.match(outcome.text ?? "", expected.text);
  assert.equal(upstream.received.length, before, "a rejected request reached the upstream");
}

/** Asserts the request was forwarded (the test upstream answers 200). */
export function assertForwarded(outcome: Outcome, upstream: TestUpstream, count = 1): void {
  assert.equal(outcome.status, 200, JSON.stringify(outcome.body));
  assert.equal(upstream.received.length, count, "the request did not reach the upstream");
}

/** A request sent over a raw connection, so that no client normalises the target first. */
export async function rawRequest(
  base: string,
  target: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: { tppMessages?: Record<string, string>[] } }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(base).port) });
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join("");
  await conn.write(
    new TextEncoder().encode(
      `GET ${target} HTTP/1.1\r\nHost: x\r\n${lines}Connection: close\r\n\r\n`,
    ),
  );
  const text = new TextDecoder().decode(await new Response(conn.readable).arrayBuffer());
  const split = text.indexOf("\r\n\r\n");
  return {
    status: Number(text.slice(0, split).split(" ")[1]),
    body: JSON.parse(text.slice(split + 4) || "{}"),
  };
}
