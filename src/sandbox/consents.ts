/**
 * Account-access consents of the legacy core: create, read, status, delete and authorise.
 *
 * Links follow the payment rules: an implicit authorisation (`scaStatus`, `scaRedirect`), or
 * only `startAuthorisation` for a corporate PSU or an explicit-authorisation preference. A
 * finalised authorisation makes the consent valid (expired at once for the test user
 * PSU-EXPIRED); a failed one rejects it.
 */
import type { Context, Hono } from "hono";
import {
  answerHeaders,
  mountAuthorisations,
  scaLinks,
  startAuthorisation,
  tppPreferences,
} from "./authorisations.ts";
import {
  adjustValidUntil,
  changeStatus,
  effectiveStatus,
  expireEarlierRecurring,
  lastActionDate,
} from "./consent_rules.ts";
import { isIsoDate, isoDate } from "./dates.ts";
import { formatError, resourceUnknown, SandboxError } from "./errors.ts";
import { headerIsTrue, headerValue, isObject, readJsonObject } from "./request.ts";
import type { AuthorisationHost, Consent, SandboxState } from "./state.ts";
import { anyHas } from "./test_users.ts";

const BASE = "/psd2/v1/consents";
const ONE = `${BASE}/:consentId`;

/** Relative href of a consent. */
export function consentHref(consent: Consent): string {
  return `${BASE}/${consent.id}`;
}

/** The consent's authorisations; a finalised one makes a received consent `valid`. */
export function consentAuthorisations(state: SandboxState, consent: Consent): AuthorisationHost {
  return {
    base: `${consentHref(consent)}/authorisations`,
    items: consent.authorisations,
    subject: { kind: "consent", consent },
    tpp: consent.tpp,
    checkStart() {
      const status = effectiveStatus(consent, state.now());
      if (status !== "received") {
        throw new SandboxError(409, "STATUS_INVALID", {
          text: `Consent "${consent.id}" with status "${status}" takes no authorisation`,
          path: "consentId",
        });
      }
    },
    finalised(auth) {
      if (effectiveStatus(consent, state.now()) !== "received") return;
      consent.psuId ??= auth.psuId;
      const expires = anyHas([consent.psuId, auth.psuId], "expiredConsent");
      changeStatus(consent, { status: expires ? "expired" : "valid", now: state.now() });
      if (!expires) expireEarlierRecurring(state, consent);
    },
    failed() {
      if (effectiveStatus(consent, state.now()) !== "received") return;
      changeStatus(consent, { status: "rejected", now: state.now() });
    },
  };
}

/** Mounts the consent routes on the app. */
export function mountConsents(app: Hono, state: SandboxState) {
  const find = (c: Context) => findConsent(state, c);
  app.post(BASE, async (c) => {
    const consent = createConsent(await readJsonObject(c), { c, now: state.now() });
    state.consents.set(consent.id, consent);
    const href = consentHref(consent);
    const links: Record<string, { href: string }> = {
      self: { href },
      status: { href: `${href}/status` },
    };
    if (
      headerValue(c, "PSU-Corporate-ID") || headerIsTrue(c, "TPP-Explicit-Authorisation-Preferred")
    ) {
      links.startAuthorisation = { href: `${href}/authorisations` };
    } else {
      const host = consentAuthorisations(state, consent);
      Object.assign(links, scaLinks(state, startAuthorisation(state, { c, host })));
    }
    answerHeaders(c, { location: href, approach: consent.tpp.approach });
    return c.json({ consentStatus: consent.status, consentId: consent.id, _links: links }, 201);
  });
  app.get(ONE, (c) => {
    const consent = find(c);
    return c.json({
      access: consent.access,
      recurringIndicator: consent.recurringIndicator,
      validUntil: consent.validUntil,
      frequencyPerDay: consent.frequencyPerDay,
      lastActionDate: lastActionDate(consent, state.now()),
      consentStatus: effectiveStatus(consent, state.now()),
      _links: consentLinks(consent),
    });
  });
  app.get(`${ONE}/status`, (c) => {
    return c.json({ consentStatus: effectiveStatus(find(c), state.now()) });
  });
  app.delete(ONE, (c) => {
    changeStatus(find(c), { status: "terminatedByTpp", now: state.now() });
    return c.body(null, 204);
  });
  mountAuthorisations(app, {
    state,
    path: `${ONE}/authorisations`,
    resolve: (c) => consentAuthorisations(state, find(c)),
  });
}

function createConsent(
  body: Record<string, unknown>,
  options: { c: Context; now: Date },
): Consent {
  if (!isIsoDate(body.validUntil)) {
    throw formatError('Field "validUntil" must be a date written YYYY-MM-DD', "validUntil");
  }
  const frequency = body.frequencyPerDay;
  return {
    id: crypto.randomUUID(),
    access: isObject(body.access) ? body.access : {},
    recurringIndicator: body.recurringIndicator === true,
    validUntil: adjustValidUntil(body.validUntil, options.now),
    frequencyPerDay: typeof frequency === "number" && Number.isFinite(frequency) ? frequency : 1,
    combinedServiceIndicator: body.combinedServiceIndicator === true,
    psuId: headerValue(options.c, "PSU-ID"),
    status: "received",
    lastActionDate: isoDate(options.now),
    tpp: tppPreferences(options.c),
    authorisations: new Map(),
  };
}

/**
 * A consent read's links: the account list, and the card account list (1.3.11 `cardAccount`) when
 * the consent names a card by maskedPan or reaches every account.
 */
function consentLinks(consent: Consent): Record<string, { href: string }> {
  const links = { account: { href: "/psd2/v1/accounts" } };
  const { access } = consent;
  const named = [access.accounts, access.balances, access.transactions].some((list) =>
    Array.isArray(list) && list.some((ref) => isObject(ref) && typeof ref.maskedPan === "string")
  );
  const every = [access.allPsd2, access.availableAccounts, access.availableAccountsWithBalance]
    .some((value) => typeof value === "string" && value.startsWith("allAccounts"));
  return named || every ? { ...links, cardAccount: { href: "/psd2/v1/card-accounts" } } : links;
}

function findConsent(state: SandboxState, c: Context): Consent {
  const consent = state.consents.get(c.req.param("consentId") ?? "");
  if (!consent) throw resourceUnknown("Consent", "consentId");
  return consent;
}
