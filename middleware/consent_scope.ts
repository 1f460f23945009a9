/**
 * `consent_scope`: account reads outside what the consent grants are refused at the edge with 401
 * CONSENT_INVALID before the core sees them, a second line behind a core that enforces consent
 * scope loosely. The gateway learns each consent as it passes, in the policy's store (every
 * instance knows it): its TPP and access at creation (POST /v1/consents), its access and status
 * from the consent and status reads, its termination on DELETE, and which account id carries
 * which references (IBAN, BBAN, masked PAN, MSISDN) from the account list, and which card account
 * id from the card account list (card accounts are read like accounts). Ids are compared in
 * their canonical form (src/psd2/identifiers.ts): an account id or a consent id in another case
 * is the same one. Refused:
 *
 * - a consent of another TPP;
 * - a consent the core reported as expired, revokedByPsu, terminatedByTpp or rejected;
 * - an account or card account read (details, balances, transactions) on one the consent does not
 *   grant, or balances or transactions on one granted only for `accounts` (a consent of
 *   `availableAccounts` grants no account read at all); a reference grants only the account that
 *   carries it (middleware/_consent_grants.ts);
 * - with `unknown_account: refuse`, a read on an account id the gateway cannot place (its list was
 *   not read with this consent, or did not show the account with a reference).
 *
 * The core's account and card account lists are filtered to the granted members when the consent
 * lists accounts (report mode logs what would have been removed). A consent the gateway never saw,
 * and by default (`unknown_account: forward`) an account id it cannot place, is forwarded and
 * counted as `unknown` (xs2a_consent_scope_total), as is every read when the store cannot be read.
 */
import { z } from "zod";
import type { Next } from "hono";
import { type BuildContext, defineCheck, type GatewayContext, modal } from "../src/core/check.ts";
import { type Answer, answerJson, changed } from "../src/core/answer.ts";
import { GatewayError } from "../src/psd2/errors.ts";
import { header, jsonBody } from "../src/core/request.ts";
import { duration } from "../src/lib/fields.ts";
import { errorText } from "../src/lib/mask.ts";
import type { CounterCell } from "../src/lib/metrics.ts";
import { type Identifiers, identifiers } from "../src/psd2/identifiers.ts";
import { consentScopeKey } from "./_consent_records.ts";
import {
  accessScope,
  ACCOUNTS,
  CARD_ACCOUNTS,
  type Family,
  grants,
  isObject,
  type Need,
  place,
  references,
  type Scope,
  storedScope,
} from "./_consent_grants.ts";

/** Statuses after which a consent grants nothing (the core reported them). */
const ENDED = new Set(["expired", "revokedByPsu", "terminatedByTpp", "rejected"]);

const NEEDS: Record<string, [Need, Family]> = {
  readAccountDetails: ["details", ACCOUNTS],
  getBalances: ["balances", ACCOUNTS],
  getTransactionList: ["transactions", ACCOUNTS],
  getTransactionDetails: ["transactions", ACCOUNTS],
  readCardAccountDetails: ["details", CARD_ACCOUNTS],
  getCardAccountBalances: ["balances", CARD_ACCOUNTS],
  getCardAccountTransactionList: ["transactions", CARD_ACCOUNTS],
};

/** The lists whose answers are filtered and teach the gateway where each id belongs. */
const LISTS: Record<string, Family> = {
  getAccountList: ACCOUNTS,
  getCardAccountList: CARD_ACCOUNTS,
};

interface ScopeConfig {
  readonly services: BuildContext["services"];
  /** The canonical form of ids (the policy's `identifiers`). */
  readonly ids: Identifiers;
  /** What a read on an account id the gateway cannot place gets. */
  readonly unknownAccount: "forward" | "refuse";
  readonly report: BuildContext["report"];
  readonly enforce: boolean;
  readonly maxRetentionMs: number;
  readonly counts: Record<"allowed" | "refused" | "unknown", CounterCell>;
}

function scopeKey(config: ScopeConfig, id: string): string {
  return consentScopeKey(config.ids, id);
}

async function load(config: ScopeConfig, id: string): Promise<Scope | undefined> {
  try {
    const text = await config.services.store.get(scopeKey(config, id));
    return text === undefined ? undefined : storedScope(text);
  } catch (error) {
    config.services.log.error({ msg: "consent scope not read", error: errorText(error) });
    return undefined;
  }
}

async function save(config: ScopeConfig, id: string, scope: Scope): Promise<void> {
  const { services } = config;
  let ttl = config.maxRetentionMs;
  if (scope.validUntil && /^\d{4}-\d{2}-\d{2}$/.test(scope.validUntil)) {
    // Kept a day past validUntil: the bank's midnight is within a day of UTC's.
    const end = Date.parse(`${scope.validUntil}T00:00:00Z`) + 2 * 86_400_000;
    ttl = Math.min(ttl, end - services.now());
  }
  try {
    if (ttl <= 0) return await services.store.delete(scopeKey(config, id));
    // The scope belongs to the TPP that created the consent (its share of a bounded store).
    await services.store.put(scopeKey(config, id), JSON.stringify(scope), ttl, scope.tpp);
  } catch (error) {
    services.log.error({ msg: "consent scope not learnt", error: errorText(error) });
  }
}

/** The core's answer as a JSON object, if it is one. */
function coreJson(answer: Answer): Record<string, unknown> | undefined {
  if (answer.source !== "core") return undefined;
  const value = answerJson(answer);
  return isObject(value) ? value : undefined;
}

/** POST /v1/consents: the TPP and the requested access, under the answer's consentId. */
async function learnCreated(c: GatewayContext, answer: Answer, config: ScopeConfig) {
  if (answer.status !== 201) return;
  const created = coreJson(answer);
  let body: unknown;
  try {
    body = jsonBody(c);
  } catch {
    return;
  }
  const id = created?.consentId;
  const access = isObject(body) ? accessScope(body.access) : undefined;
  if (typeof id !== "string" || id === "" || !access || !isObject(body)) return;
  await save(config, id, {
    ...access,
    tpp: c.get("tpp")?.id,
    status: typeof created!.consentStatus === "string" ? created!.consentStatus : undefined,
    validUntil: typeof body.validUntil === "string" ? body.validUntil : undefined,
    places: {},
  });
}

/** GET of a consent, of its status, DELETE: what the core says now, over what was learnt. */
async function learnLater(c: GatewayContext, answer: Answer, config: ScopeConfig, opId: string) {
  if (answer.status < 200 || answer.status > 299 || answer.source !== "core") return;
  const id = c.get("params").consentId;
  const known = await load(config, id);
  if (opId === "deleteConsent") {
    if (known) await save(config, id, { ...known, status: "terminatedByTpp" });
    return;
  }
  const read = coreJson(answer);
  if (!read) return;
  const status = typeof read.consentStatus === "string" ? read.consentStatus : undefined;
  if (opId === "getConsentStatus") {
    if (known && status) await save(config, id, { ...known, status });
    return;
  }
  const access = accessScope(read.access);
  if (!access && !known) return;
  await save(config, id, {
    accounts: [],
    balances: [],
    transactions: [],
    places: {},
    ...known,
    ...access,
    status: status ?? known?.status,
    validUntil: typeof read.validUntil === "string" ? read.validUntil : known?.validUntil,
  });
}

function refused(text: string): GatewayError {
  return new GatewayError(401, "CONSENT_INVALID", text, { path: "Consent-ID" });
}

/** Why the consent does not let this TPP read at all, if it does not. */
function consentProblem(c: GatewayContext, id: string, scope: Scope): GatewayError | undefined {
  const tpp = c.get("tpp")?.id;
  if (scope.tpp && tpp && scope.tpp !== tpp) {
    return refused(`Consent "${id}" was given to another TPP`);
  }
  if (scope.status && ENDED.has(scope.status)) {
    return refused(`Consent "${id}" has status "${scope.status}"`);
  }
  return undefined;
}

/**
 * The request's consent as the gateway learnt it, refused (thrown) when its state rules the read
 * out; undefined, counted as unknown, when there is no Consent-ID or the gateway has not seen it.
 */
async function knownConsent(
  c: GatewayContext,
  config: ScopeConfig,
): Promise<{ id: string; scope: Scope } | undefined> {
  const id = header(c, "consent-id");
  const scope = id ? await load(config, id) : undefined;
  if (!id || !scope) {
    config.counts.unknown.value++;
    return undefined;
  }
  const problem = consentProblem(c, id, scope);
  if (problem) {
    config.counts.refused.value++;
    throw problem;
  }
  return { id, scope };
}

/** An account read: refused outside the consent, forwarded when the gateway cannot judge. */
async function checkRead(
  c: GatewayContext,
  next: Next,
  config: ScopeConfig,
  [need, family]: [Need, Family],
) {
  const known = await knownConsent(c, config);
  if (!known) return next();
  const { id, scope } = known;
  if (scope.grant === "all") {
    config.counts.allowed.value++;
    return next();
  }
  const accountId = c.get("params")["account-id"];
  if (scope.grant === "list") {
    config.counts.refused.value++;
    throw refused(`Consent "${id}" grants the account list only, not "${need}" of an account`);
  }
  const carried = place(scope, config.ids.id("resource_id", accountId), family);
  if (carried === undefined) {
    if (config.unknownAccount === "forward") {
      config.counts.unknown.value++;
      return next();
    }
    config.counts.refused.value++;
    throw refused(
      `${family.noun} "${accountId}" is not known for consent "${id}"; read the ${family.noun.toLowerCase()} list (GET ${family.listPath}) with this consent first`,
    );
  }
  if (!grants(scope, need, carried)) {
    config.counts.refused.value++;
    throw refused(
      `Consent "${id}" does not grant "${need}" for ${family.noun.toLowerCase()} "${accountId}"`,
    );
  }
  config.counts.allowed.value++;
  return next();
}

/** What the account list's request step leaves for its answer step. */
export interface ConsentScopeVariables {
  /** The request's consent as the gateway learnt it, for filtering and learning the list. */
  listConsent?: { id: string; scope: Scope };
}

declare module "../src/core/check.ts" {
  interface GatewayVariables extends ConsentScopeVariables {}
}

/** GET /v1/accounts, /v1/card-accounts: refused like any read when the consent grants nothing. */
async function checkList(c: GatewayContext, next: Next, config: ScopeConfig) {
  const known = await knownConsent(c, config);
  if (known) {
    config.counts.allowed.value++;
    c.set("listConsent", known);
  }
  return next();
}

/**
 * The account list's (or card account list's) answer: filtered to the granted members, and the
 * references of each id learnt from the core's.
 */
async function filterList(
  c: GatewayContext,
  answer: Answer,
  config: ScopeConfig,
  family: Family,
): Promise<Answer | undefined> {
  const known = c.get("listConsent");
  const list = answer.status === 200 ? answerJson(answer) : undefined;
  const members = isObject(list) ? list[family.member] : undefined;
  if (!known || !isObject(list) || !Array.isArray(members)) return undefined;
  const { id, scope } = known;
  const seen = new Map<string, string[]>();
  const removed: string[] = [];
  const judge = scope.grant === "lists";
  const kept = members.filter((account) => {
    const carried = references(account);
    const resourceId = isObject(account) && typeof account.resourceId === "string"
      ? account.resourceId
      : undefined;
    // An account shown without a reference cannot be placed: a read of it stays unknown.
    if (resourceId !== undefined && carried.length > 0) {
      seen.set(config.ids.id("resource_id", resourceId), carried);
    }
    if (!judge || grants(scope, "details", carried)) return true;
    removed.push(resourceId ?? "?");
    return false;
  });
  if (removed.length > 0) {
    const text =
      `${family.noun} list: ${removed.length} ${family.noun.toLowerCase()}(s) not granted by consent "${id}" ${
        config.enforce ? "removed" : "would have been removed"
      }`;
    if (config.enforce) {
      config.services.log.info({ level: "warn", msg: text, request_id: c.get("requestId") });
    } else config.report(c, refused(text));
  }
  const learnt = [...seen].filter(([k, v]) => place(scope, k, family)?.join() !== v.join());
  if (learnt.length > 0 && answer.source === "core") {
    const places = { ...scope[family.places], ...Object.fromEntries(seen) };
    await save(config, id, { ...scope, [family.places]: places });
  }
  if (removed.length === 0 || !config.enforce) return undefined;
  return changed(answer, { body: JSON.stringify({ ...list, [family.member]: kept }) });
}

export const consentScope = defineCheck({
  key: "consent_scope",
  description: "Account reads outside the consent's access are refused; the account list filtered",
  options: modal({
    max_retention: duration().prefault("400d").describe(
      "Longest a learnt consent scope is kept (a validUntil of 9999-12-31 asks for the maximum)",
    ),
    unknown_account: z.enum(["forward", "refuse"]).default("forward").describe(
      "A read on an account id the gateway cannot place for a consent it knows (the account list was not read with the consent, or did not show the account with a reference): forward (counted as unknown; the core decides) or refuse (401 CONSENT_INVALID until the account list was read)",
    ),
  }, "off"),
  create(options, { operation, services, report, sections }) {
    const cells = (result: string) =>
      services.metrics.consentScope.cell({ op: operation.id, result });
    const config: ScopeConfig = Object.freeze({
      services,
      ids: identifiers(sections.identifiers),
      unknownAccount: options.unknown_account,
      report,
      enforce: options.mode === "enforce",
      maxRetentionMs: options.max_retention,
      counts: { allowed: cells("allowed"), refused: cells("refused"), unknown: cells("unknown") },
    });
    const id = operation.id;
    if (id === "createConsent") {
      return { answer: (c, answer) => learnCreated(c, answer, config) };
    }
    if (id === "getConsentInformation" || id === "getConsentStatus" || id === "deleteConsent") {
      return { answer: (c, answer) => learnLater(c, answer, config, id) };
    }
    const family = LISTS[id];
    if (family) {
      return {
        request: (c, next) => checkList(c, next, config),
        answer: (c, answer) => filterList(c, answer, config, family),
      };
    }
    const need = NEEDS[id];
    if (!need) return undefined;
    return (c, next) => checkRead(c, next, config, need);
  },
});
