/**
 * `consent_frequency`: the consent's frequencyPerDay, counted at the edge for every gateway
 * instance. The gateway learns each consent as it passes (POST /v1/consents: the request's
 * recurringIndicator, frequencyPerDay and validUntil with the answer's consentId; GET of the
 * consent refreshes it; DELETE forgets it) and keeps it until validUntil. An account read (card
 * account reads included) without PSU-IP-Address (TPP-initiated) counts per TPP and consent
 * (callers without TPP identity share one count), per resource (path) and per calendar day of the
 * bank's time zone, against min(frequencyPerDay, the TPP's maximum); a one-off consent allows 1
 * read of each resource, whoever initiates it; PSU-initiated reads on recurring consents are not
 * counted. Only reads the core answers with 2xx count (counted on the way in, taken back on the
 * way out). A resource is the path: query parameters (`withBalance`, a report's dates) never make
 * a read another resource, and the further pages of a transaction report (of an account or a card
 * account) are part of the access that read it (`_report_pages.ts`). A UUID consent id counts the
 * same in any case. Over it: 429 ACCESS_EXCEEDED. A consent the gateway never saw is forwarded
 * (the core decides), optionally capped by a default.
 */
import { z } from "zod";
import type { Next } from "hono";
import { errorText } from "../src/lib/mask.ts";
import { type BuildContext, defineCheck, type GatewayContext, modal } from "../src/core/check.ts";
import { type Answer, answerJson } from "../src/core/answer.ts";
import { header, jsonBody } from "../src/core/request.ts";
import { GatewayError } from "../src/psd2/errors.ts";
import { type BankCalendar, bankCalendar, isTimeZone } from "../src/lib/calendar.ts";
import {
  callerId,
  decide,
  failField,
  keyPart,
  policyCallerId,
  type SharedStatePlan,
  slotTag,
  storeUnavailable,
  tppKey,
} from "./_shared_state.ts";
import { duration } from "../src/lib/fields.ts";
import { retryAfter } from "../src/psd2/retry_after.ts";
import type { FrequencyPart, FrequencyVerdict } from "../src/store/types.ts";
import type { Services } from "../src/core/services.ts";
import type { Operation } from "../src/psd2/catalogue.ts";
import { type Identifiers, identifiers } from "../src/psd2/identifiers.ts";
import { keepReport, openReport, type PageKeys } from "./_report_pages.ts";

const KEY = "consent_frequency";
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** What the gateway keeps of a consent. */
interface ConsentTerms {
  recurring: boolean;
  frequencyPerDay: number;
  validUntil: string;
}

/** The options compiled once for one operation; every request of it reads this. */
interface FrequencyConfig {
  readonly operation: Operation;
  readonly operationId: string;
  readonly enforce: boolean;
  readonly fail: "open" | "closed";
  readonly timeZone: string;
  readonly calendar: BankCalendar;
  readonly maxPerDay: number;
  /** The bilateral maximum of each TPP that has one. */
  readonly bilateral: ReadonlyMap<string, number>;
  readonly unknownLimit: number;
  readonly maxRetentionMs: number;
  /** How long a served transaction report's further pages are part of its access; 0: never. */
  readonly pagesWithinMs: number;
  readonly services: Services;
  /** The canonical form of ids (the policy's `identifiers`). */
  readonly ids: Identifiers;
}

type Options = z.output<typeof consentFrequency.options>;

function compile(
  options: Options,
  { operation, services, sections }: BuildContext,
): FrequencyConfig {
  const ids = identifiers(sections.identifiers);
  return Object.freeze({
    operation,
    operationId: operation.id,
    enforce: options.mode === "enforce",
    fail: options.fail,
    timeZone: options.time_zone,
    calendar: bankCalendar(options.time_zone),
    maxPerDay: options.max_per_day,
    bilateral: new Map(
      Object.entries(options.bilateral).map(([tpp, max]) => [policyCallerId(tpp, ids), max]),
    ),
    unknownLimit: options.unknown_consent_limit,
    maxRetentionMs: options.max_retention,
    // Only transaction reports are paged (Berlin Group `_links` first, next, previous, last).
    pagesWithinMs: operation.path.endsWith("/transactions") ? options.pages_within : 0,
    services,
    ids,
  });
}

/** The terms in a consent request or a consent read answer, if they are complete. */
export function consentTerms(value: unknown): ConsentTerms | undefined {
  if (!value || typeof value !== "object") return undefined;
  const { recurringIndicator, frequencyPerDay, validUntil } = value as Record<string, unknown>;
  if (typeof recurringIndicator !== "boolean") return undefined;
  if (!Number.isInteger(frequencyPerDay) || (frequencyPerDay as number) < 1) return undefined;
  if (typeof validUntil !== "string" || !DATE.test(validUntil)) return undefined;
  return { recurring: recurringIndicator, frequencyPerDay: frequencyPerDay as number, validUntil };
}

/**
 * The learnt consent's key, by the consent id's canonical form; on a Redis Cluster under the
 * caller's tag, so one per TPP.
 */
function consentKey(c: GatewayContext, config: FrequencyConfig, id: string): string {
  return `${slotTag(c, config.services)}consent:${keyPart(config.ids.id("consent_id", id))}`;
}

/** Keeps (or, when already expired, forgets) a consent's terms until the end of validUntil. */
async function learn(
  c: GatewayContext,
  config: FrequencyConfig,
  options: { id: string; terms: ConsentTerms },
) {
  const { services } = config;
  const { id, terms } = options;
  const nextDay = new Date(Date.parse(`${terms.validUntil}T00:00:00Z`) + 86_400_000)
    .toISOString().slice(0, 10);
  const ttl = Math.min(config.calendar.startOf(nextDay) - services.now(), config.maxRetentionMs);
  try {
    if (ttl <= 0) return await services.store.delete(consentKey(c, config, id));
    await services.store.put(
      consentKey(c, config, id),
      `${terms.recurring ? 1 : 0}|${terms.frequencyPerDay}`,
      ttl,
      callerId(c, config.ids), // its share of a bounded store
    );
  } catch (error) {
    services.log.error({
      msg: "consent not learnt",
      op: config.operationId,
      error: errorText(error),
    });
  }
}

async function forget(c: GatewayContext, config: FrequencyConfig, id: string) {
  try {
    await config.services.store.delete(consentKey(c, config, id));
  } catch (error) {
    config.services.log.error({ msg: "consent not forgotten", error: errorText(error) });
  }
}

/** POST /v1/consents: learns the request's terms under the consentId of the bank's answer. */
async function learnCreated(c: GatewayContext, answer: Answer, config: FrequencyConfig) {
  if (answer.status !== 201 || answer.source !== "core") return;
  const id = (answerJson(answer) as { consentId?: unknown } | undefined)?.consentId;
  let terms: ConsentTerms | undefined;
  try {
    terms = consentTerms(jsonBody(c));
  } catch {
    terms = undefined;
  }
  if (typeof id === "string" && id !== "" && terms) await learn(c, config, { id, terms });
}

/** GET /v1/consents/{consentId}: refreshes the terms from the bank's answer. */
async function learnRead(c: GatewayContext, answer: Answer, config: FrequencyConfig) {
  if (answer.status !== 200 || answer.source !== "core") return;
  const terms = consentTerms(answerJson(answer));
  if (terms) await learn(c, config, { id: c.get("params").consentId, terms });
}

/** DELETE /v1/consents/{consentId}: forgets the consent once the bank deleted it. */
async function forgetDeleted(c: GatewayContext, answer: Answer, config: FrequencyConfig) {
  if (answer.status >= 300 || answer.source !== "core") return;
  await forget(c, config, c.get("params").consentId);
}

/** Where the read's counters and report markers live (none without Consent-ID). */
function readKeys(c: GatewayContext, config: FrequencyConfig): PageKeys | undefined {
  const consent = header(c, "consent-id");
  if (!consent) return undefined;
  // One count per TPP and consent: another TPP's reads never use up the consent's owner's. The
  // consent and the resource by their ids' canonical forms: a case variant is the same read.
  // The resource is the path alone: a query never makes a read another resource.
  const { ids } = config;
  const canonical = keyPart(ids.id("consent_id", consent));
  return {
    base: `${slotTag(c, config.services)}freq:${tppKey(c)}:${canonical}:`,
    resource: keyPart(ids.path(config.operation, c.get("params"))),
  };
}

/**
 * A read that may be a further page of a report: its own request step decides whether it is
 * refused, so the store does not block the request's other parts for it.
 */
function maybePage(c: GatewayContext, config: FrequencyConfig): boolean {
  return config.pagesWithinMs > 0 && c.req.url.includes("?");
}

/** The consent counter's part of the request's store decision (none without Consent-ID). */
function frequencyPart(c: GatewayContext, config: FrequencyConfig): FrequencyPart | undefined {
  const keys = readKeys(c, config);
  if (!keys) return undefined;
  const consent = header(c, "consent-id")!;
  const { ids } = config;
  const { base, resource } = keys;
  return {
    consentKey: consentKey(c, config, consent),
    days: config.calendar.around(config.services.now()).map((day) => ({
      key: `${base}${day.label}:${resource}`,
      start: day.start,
      end: day.end,
    })),
    max: config.bilateral.get(callerId(c, ids)) ?? config.maxPerDay,
    unknownLimit: config.unknownLimit,
    psuInitiated: c.get("psuInitiated"),
    enforce: config.enforce && !maybePage(c, config),
  };
}

/** 429 ACCESS_EXCEEDED for a read over the consent's frequency. */
function exceeded(c: GatewayContext, config: FrequencyConfig, result: FrequencyVerdict) {
  return new GatewayError(
    429,
    "ACCESS_EXCEEDED",
    `Consent "${header(c, "consent-id")}" allows ${result.limit} ${
      result.limit === 1 ? "read" : "reads"
    } of this resource a day${
      result.known ? "" : " (consent not known to the gateway)"
    }; the count starts again at midnight ${config.timeZone}`,
    {
      path: "Consent-ID",
      headers: { "retry-after": retryAfter(result.retryMs) },
    },
  );
}

/** Takes back a read counted on the way in (the core did not answer it with 2xx). */
async function refund(c: GatewayContext, config: FrequencyConfig, counter: string) {
  try {
    await config.services.store.refund(counter);
  } catch (error) {
    config.services.log.error({
      msg: "consent read not refunded",
      op: config.operationId,
      request_id: c.get("requestId") || undefined,
      error: errorText(error),
    });
  }
}

/** What the read's request step leaves for its answer step. */
export interface ConsentFrequencyVariables {
  /** The counter this read was counted on, taken back unless the core serves the read. */
  frequencyCounter?: string;
  /** A further page of a served report: when that report's access ends (ms). */
  reportEnds?: number;
}

declare module "../src/core/check.ts" {
  interface GatewayVariables extends ConsentFrequencyVariables {}
}

/**
 * An account read: refused when the store found the consent's count for today used up. The read
 * is counted in the request's one decision on the way in; one the core does not answer with 2xx
 * is taken back by the answer step, so only reads the core served count.
 */
async function countRead(
  c: GatewayContext,
  next: Next,
  config: FrequencyConfig,
  plan: SharedStatePlan,
) {
  const keys = maybePage(c, config) ? readKeys(c, config) : undefined;
  const [outcome, reportEnds] = await Promise.all([
    decide(c, plan, config.services),
    keys &&
    openReport(config.services.store, {
      keys,
      url: new URL(c.req.url),
      now: config.services.now(),
    }),
  ]);
  if (outcome.error) {
    storeUnavailable(c, config.services, { check: KEY, fail: config.fail });
    return next();
  }
  const result = outcome.verdict.frequency;
  if (reportEnds !== undefined) {
    // A further page of a report already counted: part of that access, never counted again.
    c.set("reportEnds", reportEnds);
    if (result?.counter) await refund(c, config, result.counter);
    return next();
  }
  if (result?.counted && !result.allowed) throw exceeded(c, config, result);
  if (result?.counter) c.set("frequencyCounter", result.counter);
  return next();
}

/**
 * The read's answer: a count the core did not serve (no answer, or not 2xx) is taken back; a
 * report the core served opens its further pages (the read's own, or the access it is a page of).
 */
async function settle(c: GatewayContext, answer: Answer, config: FrequencyConfig) {
  const counter = c.get("frequencyCounter");
  const ends = c.get("reportEnds");
  if (!counter && ends === undefined) return;
  const status = c.get("upstream")?.status;
  const served = status !== undefined && status >= 200 && status <= 299;
  if (!served) {
    if (counter) await refund(c, config, counter);
    return;
  }
  const keys = config.pagesWithinMs > 0 ? readKeys(c, config) : undefined;
  if (!keys || answer.source !== "core") return;
  const now = config.services.now();
  try {
    await keepReport(config.services.store, {
      c,
      keys,
      answer,
      now,
      ends: ends ?? now + config.pagesWithinMs,
      opened: ends === undefined,
    });
  } catch (error) {
    config.services.log.error({
      msg: "report pages not kept",
      op: config.operationId,
      error: errorText(error),
    });
  }
}

export const consentFrequency = defineCheck({
  key: KEY,
  description: "Counts TPP-initiated account reads against the consent's frequencyPerDay (429)",
  options: modal({
    fail: failField("open"),
    time_zone: z.string().min(1).default("UTC").describe(
      "The bank's time zone (IANA name, for example Asia/Tbilisi): a day of reads starts at its midnight",
    ),
    max_per_day: z.number().int().min(1).default(4).describe(
      "The largest frequencyPerDay honoured: the effective limit is min(requested, this)",
    ),
    bilateral: z.record(z.string().min(1), z.number().int().min(1)).default({}).describe(
      "Maximum agreed bilaterally, by TPP id (or ip:<address> without a TPP identity); replaces max_per_day for that TPP",
    ),
    unknown_consent_limit: z.number().int().min(0).default(0).describe(
      "TPP-initiated reads a day per resource for a consent the gateway never saw; 0: not counted",
    ),
    max_retention: duration().prefault("400d").describe(
      "Longest a learnt consent is kept (a validUntil of 9999-12-31 asks for the maximum)",
    ),
    pages_within: duration().prefault("1h").describe(
      "How long after a counted transaction report its further pages (pageIndex, itemsPerPage, the answer's paging links) belong to that access and are not counted again",
    ),
  }),
  validate(options) {
    return isTimeZone(options.time_zone)
      ? []
      : [`time_zone "${options.time_zone}" is not a known IANA time zone`];
  },
  create(options, context) {
    const config = compile(options, context);
    switch (context.operation.id) {
      case "createConsent":
        return { answer: (c, answer) => learnCreated(c, answer, config) };
      case "getConsentInformation":
        return { answer: (c, answer) => learnRead(c, answer, config) };
      case "deleteConsent":
        return { answer: (c, answer) => forgetDeleted(c, answer, config) };
    }
    // Card account reads are account reads (Berlin Group 1.3.11): the same count.
    const group = context.operation.group;
    if (group !== "ais" && group !== "cards") return undefined;
    const plan = context.decisions;
    plan.frequency = (c) => frequencyPart(c, config);
    plan.owner ??= (c) => callerId(c, config.ids);
    return {
      request: (c, next) => countRead(c, next, config, plan),
      answer: (c, answer) => settle(c, answer, config),
    };
  },
});
