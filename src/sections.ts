/**
 * The policy file's global sections (everything that is not per-operation check options).
 * Each section is a zod schema; `policy.ts` puts them at the top level of the file.
 */
import { z } from "zod";
import { tppKeysSection, trustSection } from "./pki/sections.ts";

/** Where the legacy core lives. */
export const upstreamSection = z.object({
  url: z.url({ protocol: /^https?$/ }).describe(
    "Base URL of the bank's core API, for example ${UPSTREAM_URL}",
  ),
  prefix: z.string().regex(/^(\/[A-Za-z0-9._~-]+)*$/).default("/psd2/v1").describe(
    "Path prefix of the Berlin Group operations on the upstream; it replaces the public /v1",
  ),
}).strict().describe("The upstream (legacy core banking API)");

/** An optional value from an environment reference: an empty string means "not set". */
function unsetWhenEmpty<T extends z.ZodType>(schema: T) {
  return z.preprocess((v) => (v === "" || v === null ? undefined : v), schema.optional());
}

/** Where Prometheus scrapes the metrics. */
export const metricsSection = z.object({
  port: unsetWhenEmpty(z.coerce.number().int().min(1).max(65535)).describe(
    "Serve /metrics on this separate port (on the gateway's host), for example ${METRICS_PORT:-}",
  ),
  token: unsetWhenEmpty(z.string().min(16)).describe(
    "Serve /metrics on the main port to requests with Authorization: Bearer <token>, for example ${METRICS_TOKEN:-}",
  ),
}).strict().default({}).describe("Prometheus metrics; off unless a port or a token is set");

/** Every global section, by its key in the policy file. */
export const SECTIONS = {
  upstream: upstreamSection,
  metrics: metricsSection,
  trust: trustSection,
  tpp_keys: tppKeysSection,
};

/** The global sections of a loaded policy, parsed. */
export type PolicySections = { [K in keyof typeof SECTIONS]: z.output<typeof SECTIONS[K]> };
