/**
 * Authorisation sub-resources, shared by payments, payment cancellations and consents.
 *
 * SCA status moves by the body of a POST or PUT (the field names follow the Berlin Group
 * bodies): `scaAuthenticationData` or `confirmationCode` finalise, `authenticationMethodId`
 * selects a method, `psuData` authenticates, and an empty PUT identifies the PSU (decoupled).
 */
import type { Context, Hono } from "hono";
import { resourceUnknown, SandboxError } from "./errors.ts";
import { headerIsTrue, headerValue, type JsonObject, readJsonObject } from "./request.ts";
import type { Authorisation, ScaApproach, ScaStatus } from "./state.ts";

/** The bank's own SCA pages; these links stay absolute through the gateway. */
export const BANK_SCA_ORIGIN = "https://sandbox-bank.example";

/** A resource that owns one collection of authorisation sub-resources. */
export interface AuthorisationHost {
  /** Relative href of the collection, for example `/psd2/v1/consents/{id}/authorisations`. */
  base: string;
  items: Map<string, Authorisation>;
  /** Throws a {@link SandboxError} when the resource takes no new authorisation now. */
  checkStart(): void;
  /** Runs after an authorisation of the collection reached `finalised`. */
  finalised(auth: Authorisation): void;
}

/** Finds the host of a request, or throws a 404. */
export type HostResolver = (c: Context) => AuthorisationHost;

const PSU_MESSAGES: Record<ScaStatus, string> = {
  received: "Please authorise the request",
  psuIdentified: "Please confirm the request in your mobile banking app",
  psuAuthenticated: "Please select an authentication method",
  scaMethodSelected: "Please enter the one-time password sent to your device",
  finalised: "The authorisation is finalised",
};

/** Decoupled when only decoupled is preferred; redirect otherwise. */
export function scaApproach(c: Context): ScaApproach {
  const decoupled = headerIsTrue(c, "TPP-Decoupled-Preferred");
  return decoupled && !headerIsTrue(c, "TPP-Redirect-Preferred") ? "DECOUPLED" : "REDIRECT";
}

/** The message for the PSU at a given SCA status. */
export function psuMessage(auth: Authorisation): string {
  if (auth.scaStatus === "received" && auth.approach === "REDIRECT") {
    return "Please authorise the request in the online banking of the bank";
  }
  return PSU_MESSAGES[auth.scaStatus];
}

/** Relative href of one authorisation. */
export function authorisationHref(host: AuthorisationHost, auth: Authorisation): string {
  return `${host.base}/${auth.id}`;
}

/** Links of an authorisation: its status, and the bank's SCA page while redirect SCA is open. */
export function scaLinks(host: AuthorisationHost, auth: Authorisation) {
  const links: Record<string, { href: string }> = {
    scaStatus: { href: authorisationHref(host, auth) },
  };
  if (auth.approach === "REDIRECT" && auth.scaStatus !== "finalised") {
    links.scaRedirect = { href: `${BANK_SCA_ORIGIN}/sca/redirect/${auth.id}` };
  }
  if (auth.approach === "DECOUPLED" && auth.scaStatus === "received") {
    links.updatePsuIdentification = { href: authorisationHref(host, auth) };
  }
  return links;
}

/**
 * Creates an authorisation in the host (implicitly after a POST, or explicitly).
 *
 * Without a body it is `received`, or `psuIdentified` when a PSU-ID header is sent.
 */
export function startAuthorisation(
  host: AuthorisationHost,
  options: { c: Context; body?: JsonObject },
): Authorisation {
  const { c, body = {} } = options;
  host.checkStart();
  const psuId = headerValue(c, "PSU-ID");
  const auth: Authorisation = {
    id: crypto.randomUUID(),
    scaStatus: statusFromBody(body) ?? (psuId ? "psuIdentified" : "received"),
    approach: scaApproach(c),
    psuId,
  };
  host.items.set(auth.id, auth);
  if (auth.scaStatus === "finalised") host.finalised(auth);
  return auth;
}

/** Mounts POST (start), GET (list), GET one (SCA status) and PUT (update) under `path`. */
export function mountAuthorisations(app: Hono, options: { path: string; resolve: HostResolver }) {
  const { path, resolve } = options;
  app.post(path, async (c) => {
    const host = resolve(c);
    const body = await readJsonObject(c, { optional: true });
    const auth = startAuthorisation(host, { c, body });
    return c.json({
      scaStatus: auth.scaStatus,
      authorisationId: auth.id,
      psuMessage: psuMessage(auth),
      _links: scaLinks(host, auth),
    }, 201);
  });
  app.get(path, (c) => c.json({ authorisationIds: [...resolve(c).items.keys()] }));
  app.get(`${path}/:authorisationId`, (c) => {
    const host = resolve(c);
    const auth = findAuthorisation(host, c);
    return c.json({
      scaStatus: auth.scaStatus,
      psuMessage: psuMessage(auth),
      trustedBeneficiaryFlag: false,
      _links: scaLinks(host, auth),
    });
  });
  app.put(`${path}/:authorisationId`, async (c) => {
    const host = resolve(c);
    const auth = findAuthorisation(host, c);
    const body = await readJsonObject(c, { optional: true });
    if (auth.scaStatus === "finalised") {
      throw new SandboxError(409, "STATUS_INVALID", {
        text: `Authorisation "${auth.id}" is already finalised`,
        path: "authorisationId",
      });
    }
    auth.scaStatus = statusFromBody(body) ?? "psuIdentified";
    auth.psuId = headerValue(c, "PSU-ID") ?? auth.psuId;
    if (auth.scaStatus === "finalised") host.finalised(auth);
    const links = { scaStatus: { href: authorisationHref(host, auth) } };
    return c.json({ scaStatus: auth.scaStatus, psuMessage: psuMessage(auth), _links: links });
  });
}

function findAuthorisation(host: AuthorisationHost, c: Context): Authorisation {
  const auth = host.items.get(c.req.param("authorisationId") ?? "");
  if (!auth) throw resourceUnknown("Authorisation", "authorisationId");
  return auth;
}

function statusFromBody(body: JsonObject): ScaStatus | undefined {
  if ("scaAuthenticationData" in body || "confirmationCode" in body) return "finalised";
  if ("authenticationMethodId" in body) return "scaMethodSelected";
  if ("psuData" in body) return "psuAuthenticated";
  return undefined;
}
