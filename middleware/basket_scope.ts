/**
 * `basket_scope`: a signing basket holds only the calling TPP's own payments and consents, and
 * only the TPP that created a basket reads, deletes or authorises it, judged at the edge from what
 * the gateway learnt, a second line behind a core that checks ownership loosely. The gateway
 * learns, in the policy's store (every instance knows it), the TPP of each payment from the
 * initiation's answer (its paymentId) and of each basket from createSigningBasket's answer (its
 * basketId); a consent's TPP is what `consent_scope` learnt at its creation
 * (middleware/_consent_records.ts), so consents are judged only where `consent_scope` runs. Ids
 * are compared in their canonical form (src/psd2/identifiers.ts). Refused:
 *
 * - a basket naming a payment or a consent of another TPP: 400 RESOURCE_UNKNOWN, path
 *   `paymentIds[i]` or `consentIds[i]` (the standard's RESOURCE_UNKNOWN is "unknown relative to
 *   the TPP", 400 for a resource addressed in the payload; REFERENCE_MIX_INVALID is about a
 *   combination of kinds the bank does not support, not about whose the ids are);
 * - a read, delete or authorisation of another TPP's basket: 403 RESOURCE_UNKNOWN, path
 *   `basketId` (403 for a resource in the path);
 * - with `unknown_id: refuse`, an id the gateway never saw, with the same errors.
 *
 * By default (`unknown_id: forward`) an id the gateway never saw is forwarded and counted as
 * `unknown` (xs2a_basket_scope_total), as is every request of a caller without a TPP identity and
 * every request when the store cannot be read (logged): the core decides.
 */
import { z } from "zod";
import type { Next } from "hono";
import { type BuildContext, defineCheck, type GatewayContext, modal } from "../src/core/check.ts";
import { type Answer, answerJson } from "../src/core/answer.ts";
import { jsonBody } from "../src/core/request.ts";
import { GatewayError } from "../src/psd2/errors.ts";
import { duration } from "../src/lib/fields.ts";
import { errorText } from "../src/lib/mask.ts";
import type { CounterCell } from "../src/lib/metrics.ts";
import { type Identifiers, identifiers } from "../src/psd2/identifiers.ts";
import { keyPart } from "./_shared_state.ts";
import { consentOwner } from "./_consent_records.ts";

/** The operations on one basket (its id in the path). */
const ON_BASKET = new Set([
  "getSigningBasket",
  "deleteSigningBasket",
  "getSigningBasketStatus",
  "startSigningBasketAuthorisation",
  "getSigningBasketAuthorisation",
  "getSigningBasketScaStatus",
  "updateSigningBasketPsuData",
]);

/** What the gateway learns the owner of. */
type Kind = "payment" | "basket";

interface BasketConfig {
  readonly services: BuildContext["services"];
  readonly ids: Identifiers;
  readonly unknownId: "forward" | "refuse";
  readonly retentionMs: number;
  readonly counts: Record<"allowed" | "refused" | "unknown", CounterCell>;
}

/** The store key of the owner of a payment or basket (its id in the canonical form). */
function ownerKey(ids: Identifiers, kind: Kind, id: string): string {
  return `owner:${kind}:${keyPart(ids.id("resource_id", id))}`;
}

/** The core's 201 answer's id field, when it is a non-empty string. */
function createdId(answer: Answer, field: string): string | undefined {
  if (answer.status !== 201 || answer.source !== "core") return undefined;
  const body = answerJson(answer);
  if (typeof body !== "object" || body === null || Array.isArray(body)) return undefined;
  const id = (body as Record<string, unknown>)[field];
  return typeof id === "string" && id !== "" ? id : undefined;
}

/** Learns the calling TPP as the owner of the resource the core created. */
async function learn(c: GatewayContext, answer: Answer, config: BasketConfig, kind: Kind) {
  // A caller without a TPP identity owns nothing the gateway could judge: its answer is not read.
  const tpp = c.get("tpp")?.id;
  if (!tpp) return;
  const id = createdId(answer, kind === "payment" ? "paymentId" : "basketId");
  if (!id) return;
  try {
    // The record belongs to the TPP that created the resource (its share of a bounded store).
    await config.services.store.put(ownerKey(config.ids, kind, id), tpp, config.retentionMs, tpp);
  } catch (error) {
    config.services.log.error({ msg: `${kind} owner not learnt`, error: errorText(error) });
  }
}

/** One id a request names, with where it stands and how to read its owner. */
interface Named {
  path: string;
  id: string;
  what: "Payment" | "Consent" | "Signing basket";
  owner: () => Promise<string | undefined>;
}

/** The owners of the named ids, or undefined when the store cannot be read. */
async function owners(named: Named[], config: BasketConfig) {
  try {
    return await Promise.all(named.map((n) => n.owner()));
  } catch (error) {
    config.services.log.error({ msg: "basket scope not read", error: errorText(error) });
    return undefined;
  }
}

/**
 * Judges the ids a request names against the calling TPP: refused (thrown) for another TPP's,
 * or for an unseen one with `unknown_id: refuse`; passed on otherwise.
 */
async function judge(
  c: GatewayContext,
  next: Next,
  config: BasketConfig,
  options: { named: Named[]; refuse: (n: Named, text: string) => GatewayError },
) {
  const tpp = c.get("tpp")?.id;
  const found = tpp && options.named.length > 0 ? await owners(options.named, config) : undefined;
  if (!tpp || !found) {
    config.counts.unknown.value++;
    return next();
  }
  let unknown = false;
  for (const [i, n] of options.named.entries()) {
    const owner = found[i];
    if (owner !== undefined && owner !== tpp) {
      config.counts.refused.value++;
      throw options.refuse(n, `${n.what} "${n.id}" is unknown to this TPP`);
    }
    if (owner !== undefined) continue;
    if (config.unknownId === "refuse") {
      config.counts.refused.value++;
      throw options.refuse(n, `${n.what} "${n.id}" is not known to the gateway for this TPP`);
    }
    unknown = true;
  }
  if (unknown) {
    config.counts.unknown.value++;
    config.services.log.info({
      level: "warn",
      msg: "signing basket names ids the gateway never saw",
      request_id: c.get("requestId"),
    });
  } else config.counts.allowed.value++;
  return next();
}

function listOf(body: unknown, field: string): string[] {
  const list = typeof body === "object" && body !== null
    ? (body as Record<string, unknown>)[field]
    : undefined;
  return Array.isArray(list) ? list.filter((id): id is string => typeof id === "string") : [];
}

/** POST /v1/signing-baskets: every payment and consent of the basket is the caller's. */
function checkCreate(c: GatewayContext, next: Next, config: BasketConfig) {
  let body: unknown;
  try {
    body = jsonBody(c);
  } catch {
    // body_schema refuses a body that is not JSON; nothing to judge here.
    return next();
  }
  const { store, ids } = { store: config.services.store, ids: config.ids };
  const named: Named[] = [
    ...listOf(body, "paymentIds").map((id, i): Named => ({
      path: `paymentIds[${i}]`,
      id,
      what: "Payment",
      owner: () => store.get(ownerKey(ids, "payment", id)),
    })),
    ...listOf(body, "consentIds").map((id, i): Named => ({
      path: `consentIds[${i}]`,
      id,
      what: "Consent",
      owner: () => consentOwner(store, ids, id),
    })),
  ];
  return judge(c, next, config, {
    named,
    refuse: (n, text) => new GatewayError(400, "RESOURCE_UNKNOWN", text, { path: n.path }),
  });
}

/** An operation on one basket: the basket is the caller's. */
function checkBasket(c: GatewayContext, next: Next, config: BasketConfig) {
  const id = c.get("params").basketId ?? "";
  const named: Named[] = [{
    path: "basketId",
    id,
    what: "Signing basket",
    owner: () => config.services.store.get(ownerKey(config.ids, "basket", id)),
  }];
  return judge(c, next, config, {
    named,
    refuse: (n, text) => new GatewayError(403, "RESOURCE_UNKNOWN", text, { path: n.path }),
  });
}

export const basketScope = defineCheck({
  key: "basket_scope",
  description:
    "Signing baskets hold only the caller's payments and consents; another TPP's basket is refused",
  options: modal({
    retention: duration().prefault("30d").describe(
      "How long the TPP of a payment or a basket is kept after its creation (a basket naming an older payment finds it unknown)",
    ),
    unknown_id: z.enum(["forward", "refuse"]).default("forward").describe(
      "A payment, consent or basket id the gateway never saw (created before it ran, or longer ago than retention): forward (counted as unknown; the core decides) or refuse (400 or 403 RESOURCE_UNKNOWN)",
    ),
  }),
  create(options, { operation, services, sections }) {
    const cells = (result: string) =>
      services.metrics.basketScope.cell({ op: operation.id, result });
    const config: BasketConfig = Object.freeze({
      services,
      ids: identifiers(sections.identifiers),
      unknownId: options.unknown_id,
      retentionMs: options.retention,
      counts: { allowed: cells("allowed"), refused: cells("refused"), unknown: cells("unknown") },
    });
    const id = operation.id;
    if (id === "initiatePayment") {
      return { answer: (c, answer) => learn(c, answer, config, "payment") };
    }
    if (id === "createSigningBasket") {
      return {
        request: (c, next) => checkCreate(c, next, config),
        answer: (c, answer) => learn(c, answer, config, "basket"),
      };
    }
    if (!ON_BASKET.has(id)) return undefined;
    return (c, next) => checkBasket(c, next, config);
  },
});
