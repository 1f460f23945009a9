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

/** Every global section, by its key in the policy file. */
export const SECTIONS = {
  upstream: upstreamSection,
  trust: trustSection,
  tpp_keys: tppKeysSection,
};

/** The global sections of a loaded policy, parsed. */
export type PolicySections = { [K in keyof typeof SECTIONS]: z.output<typeof SECTIONS[K]> };
