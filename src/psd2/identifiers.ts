/**
 * Identifiers in one canonical form: every decision that keys on an id (consent scope, consent
 * frequency, idempotency, rate limits) compares this form and no other, so that an id the core
 * would take for the same one never escapes a check by its spelling. A UUID is always compared
 * without case (RFC 9562: its hex digits are case-insensitive). Other ids follow the policy's
 * `identifiers.case`, by kind: `insensitive` (the default) for a core that compares them without
 * case, as Java's `equalsIgnoreCase` or a Postgres `citext` column does, `sensitive` for a core
 * known to compare them byte for byte. When unsure, the safe choice is `insensitive`: two ids the
 * core could take for one are one to the gateway (a PSU-ID's variants share a limit), whereas
 * `sensitive` with a core that ignores case lets an upper-cased id past every check.
 */
import { z } from "zod";
import { UUID } from "../lib/ids.ts";
import { addressNetwork } from "../lib/ip.ts";
import { type Operation, templateParams } from "./catalogue.ts";

/** The kinds of id the policy gives a comparison for. */
export const ID_KINDS = ["consent_id", "resource_id", "psu_id", "request_id"] as const;

/** A kind of id: Consent-ID, a resource id in a path, PSU-ID, X-Request-ID. */
export type IdKind = typeof ID_KINDS[number];

function caseField(what: string) {
  return z.enum(["insensitive", "sensitive"]).default("insensitive").describe(
    `How the core compares ${what} that are not UUIDs (UUIDs always without case): insensitive (the safe default: ids the core could take for one are one) or sensitive`,
  );
}

/** The policy's `identifiers` section. */
export const identifiersSection = z.object({
  case: z.object({
    consent_id: caseField("consent ids (Consent-ID, consentId in paths)"),
    resource_id: caseField("resource ids in paths (account-id, paymentId, transactionId, ...)"),
    psu_id: caseField("PSU-IDs"),
    request_id: caseField("X-Request-IDs"),
  }).strict().prefault({}).describe("How the core compares each kind of id"),
  ipv6_prefix: z.int().min(32).max(128).default(64).describe(
    "A client without TPP identity on IPv6 is counted by this many leading bits of its address (an IPv6 client usually holds a whole /64); an IPv4 client by its whole address",
  ),
}).strict().prefault({}).describe(
  "How ids and client addresses are compared by every check that keys on them",
);

/** The parsed `identifiers` section. */
export type IdentifiersSection = z.output<typeof identifiersSection>;

/**
 * The canonical form of an id: a UUID in lower case; any other id in lower case when compared
 * without case (upper-cased first, so that characters Java's `equalsIgnoreCase` matches through
 * their upper case, `ſ` and `s`, meet too), else as sent.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { canonicalId } from "./identifiers.ts";
 *
 * assert.equal(canonicalId("5B1F3C2E-7A41-4D6B-9C0E-00000000000A", false), "5b1f3c2e-7a41-4d6b-9c0e-00000000000a");
 * assert.equal(canonicalId("Acc-1", true), "acc-1");
 * assert.equal(canonicalId("Acc-1", false), "Acc-1");
 * ```
 */
export function canonicalId(value: string, insensitive: boolean): string {
  if (UUID.test(value)) return value.toLowerCase();
  return insensitive ? value.toUpperCase().toLowerCase() : value;
}

/** The comparisons of one policy, compiled once. */
export interface Identifiers {
  /** The canonical form of an id of this kind. */
  id(kind: IdKind, value: string): string;
  /** A path parameter's canonical form (a listed value, like a payment product, as sent). */
  param(operation: Operation, name: string, value: string): string;
  /** The operation's path with every parameter in its canonical form. */
  path(operation: Operation, params: Record<string, string>): string;
  /** The network a client address counts by (see {@link addressNetwork}). */
  client(address: string): string;
}

const DEFAULTS = identifiersSection.parse(undefined);

/** Each operation's path parameters, read from its template once (not on every request). */
const templateNames = new WeakMap<Operation, readonly string[]>();

function namesOf(operation: Operation): readonly string[] {
  let names = templateNames.get(operation);
  if (!names) templateNames.set(operation, names = templateParams(operation.path));
  return names;
}

/** The comparisons the policy's `identifiers` section gives (its defaults when there is none). */
export function identifiers(section: IdentifiersSection = DEFAULTS): Identifiers {
  const insensitive = (kind: IdKind) => section.case[kind] === "insensitive";
  const cases = Object.fromEntries(ID_KINDS.map((kind) => [kind, insensitive(kind)])) as Record<
    IdKind,
    boolean
  >;
  const id = (kind: IdKind, value: string) => canonicalId(value, cases[kind]);
  const param = (operation: Operation, name: string, value: string) => {
    if (operation.params[name]?.values) return value;
    return id(name === "consentId" ? "consent_id" : "resource_id", value);
  };
  return Object.freeze({
    id,
    param,
    path(operation: Operation, params: Record<string, string>) {
      let path = operation.path;
      for (const name of namesOf(operation)) {
        path = path.replace(
          `{${name}}`,
          encodeURIComponent(param(operation, name, params[name] ?? "")),
        );
      }
      return path;
    },
    client: (address: string) => addressNetwork(address, section.ipv6_prefix),
  });
}
