/**
 * Authorisation sub-resources, shared by payments, payment cancellations and consents.
 *
 * The approach follows the TPP's preferences: decoupled when only decoupled is preferred,
 * embedded when redirect is not preferred (`TPP-Redirect-Preferred: false`), redirect otherwise.
 * The body of a POST or PUT is one step of the standard (src/sandbox/sca_flow.ts): empty (update
 * PSU identification), `psuData` (answered with `scaMethods`), `authenticationMethodId` (answered
 * with `chosenScaMethod` and `challengeData`), `scaAuthenticationData` or `confirmationCode`.
 * An `unconfirmed` authorisation (redirect SCA with the setting `redirectConfirmation`) takes only
 * the `confirmationCode` the redirect to the TPP carried; its links name it `confirmation`.
 */
import type { Context, Hono } from "hono";
import { resourceUnknown, SandboxError } from "./errors.ts";
import { headerIsTrue, headerValue, isObject, type JsonObject, readJsonObject } from "./request.ts";
import {
  assertOpen,
  authenticate,
  authorise,
  awaitsConfirmation,
  confirm,
  identify,
  selectMethod,
  wrongOtp,
} from "./sca_flow.ts";
import { challengeOf, findScaMethod, SCA_METHODS } from "./sca_methods.ts";
import type {
  Authorisation,
  AuthorisationHost,
  SandboxState,
  ScaApproach,
  TppPreferences,
} from "./state.ts";

/** The placeholder origin of the SCA pages when the sandbox is not served (app.request tests). */
export const BANK_SCA_ORIGIN = "https://sandbox-bank.example";

/** Finds the host of a request, or throws a 404. */
export type HostResolver = (c: Context) => AuthorisationHost;

/** Hyperlinks of an answer. */
export type Links = Record<string, { href: string }>;

/**
 * The approach the request's preferences ask for, or `undefined` when it states none: decoupled
 * when only decoupled is preferred, embedded when redirect is explicitly not preferred.
 */
export function preferredApproach(c: Context): ScaApproach | undefined {
  const redirect = headerValue(c, "TPP-Redirect-Preferred")?.toLowerCase();
  if (headerIsTrue(c, "TPP-Decoupled-Preferred") && redirect !== "true") return "DECOUPLED";
  if (redirect === "false") return "EMBEDDED";
  if (redirect === "true") return "REDIRECT";
  return undefined;
}

/** The preferences of a request that creates a resource (redirect when it states none). */
export function tppPreferences(c: Context): TppPreferences {
  return {
    approach: preferredApproach(c) ?? "REDIRECT",
    redirectUri: headerValue(c, "TPP-Redirect-URI"),
    nokRedirectUri: headerValue(c, "TPP-Nok-Redirect-URI"),
  };
}

/** The message for the PSU at the authorisation's status. */
export function psuMessage(auth: Authorisation): string {
  switch (auth.scaStatus) {
    case "received":
      if (auth.approach === "EMBEDDED") return "Please log in with your user ID and password";
      if (auth.approach === "DECOUPLED") return "Please identify the PSU (PSU-ID)";
      return "Please authorise the request in the online banking of the bank";
    case "psuIdentified":
      if (auth.approach === "DECOUPLED") {
        return "Please confirm the request in your mobile banking app";
      }
      if (auth.approach === "EMBEDDED") return "Please enter your password";
      return "Please authorise the request in the online banking of the bank";
    case "psuAuthenticated":
      return "Please select an authentication method";
    case "scaMethodSelected":
      return "Please enter the one-time password";
    case "unconfirmed":
      return "The PSU has authorised; the TPP confirms with the confirmation code";
    case "finalised":
      return "The authorisation is finalised";
    case "failed":
      return "The authorisation has failed";
  }
}

/** Relative href of one authorisation. */
export function authorisationHref(auth: Authorisation): string {
  return `${auth.host.base}/${auth.id}`;
}

/** The address of the authorisation's SCA page. */
export function scaRedirectHref(state: SandboxState, auth: Authorisation): string {
  return `${state.settings.scaOrigin().replace(/\/+$/, "")}/sca/${auth.redirectToken}`;
}

/** Links of an authorisation: its status, and where the next step of its approach goes. */
export function scaLinks(state: SandboxState, auth: Authorisation): Links {
  const href = authorisationHref(auth);
  const links: Links = { scaStatus: { href } };
  if (auth.scaStatus === "finalised" || auth.scaStatus === "failed") return links;
  if (awaitsConfirmation(auth)) {
    links.confirmation = { href };
  } else if (auth.approach === "REDIRECT") {
    links.scaRedirect = { href: scaRedirectHref(state, auth) };
    if (state.settings.redirectConfirmation) links.confirmation = { href };
  } else if (auth.approach === "DECOUPLED") {
    if (auth.scaStatus === "received") links.updatePsuIdentification = { href };
  } else if (auth.scaStatus === "psuAuthenticated") {
    links.selectAuthenticationMethod = { href };
  } else if (auth.scaStatus === "scaMethodSelected") {
    links.authoriseTransaction = { href };
  } else {
    links.updatePsuAuthentication = { href };
  }
  return links;
}

/**
 * The body of an answer to a step: status, message, links, and `scaMethods` after PSU
 * authentication or `chosenScaMethod` with `challengeData` after method selection.
 */
export function stepBody(state: SandboxState, auth: Authorisation): JsonObject {
  const body: JsonObject = { scaStatus: auth.scaStatus };
  if (auth.scaStatus === "psuAuthenticated") body.scaMethods = SCA_METHODS;
  const method = auth.chosenMethodId ? findScaMethod(auth.chosenMethodId) : undefined;
  if (auth.scaStatus === "scaMethodSelected" && method) {
    body.chosenScaMethod = method;
    body.challengeData = challengeOf(method);
  }
  body.psuMessage = psuMessage(auth);
  body._links = scaLinks(state, auth);
  return body;
}

/**
 * Creates an authorisation in the host (implicitly after a POST, or explicitly) and runs the
 * step its body carries. Without a body it is `received`, or `psuIdentified` with a PSU-ID.
 */
export function startAuthorisation(
  state: SandboxState,
  options: { c: Context; host: AuthorisationHost; body?: JsonObject },
): Authorisation {
  const { c, host, body = {} } = options;
  host.checkStart();
  const auth: Authorisation = {
    id: crypto.randomUUID(),
    scaStatus: "received",
    approach: preferredApproach(c) ?? host.tpp.approach,
    host,
    redirectToken: randomToken(),
    redirectUri: headerValue(c, "TPP-Redirect-URI") ?? host.tpp.redirectUri,
    nokRedirectUri: headerValue(c, "TPP-Nok-Redirect-URI") ?? host.tpp.nokRedirectUri,
    failedOtps: 0,
  };
  host.items.set(auth.id, auth);
  state.authorisations.set(auth.id, auth);
  state.redirects.set(auth.redirectToken, auth);
  runStep(state, auth, { c, body, start: true });
  return auth;
}

/** Sets `Location` (for a 201) and `ASPSP-SCA-Approach` on an answer. */
export function answerHeaders(c: Context, options: { location?: string; approach: ScaApproach }) {
  if (options.location) c.header("Location", options.location);
  c.header("ASPSP-SCA-Approach", options.approach);
}

/** Mounts POST (start), GET (list), GET one (SCA status) and PUT (update) under `path`. */
export function mountAuthorisations(
  app: Hono,
  options: { state: SandboxState; path: string; resolve: HostResolver },
) {
  const { state, path, resolve } = options;
  app.post(path, async (c) => {
    const host = resolve(c);
    const body = await readJsonObject(c, { optional: true });
    const auth = startAuthorisation(state, { c, host, body });
    answerHeaders(c, { location: authorisationHref(auth), approach: auth.approach });
    return c.json({ authorisationId: auth.id, ...stepBody(state, auth) }, 201);
  });
  app.get(path, (c) => c.json({ authorisationIds: [...resolve(c).items.keys()] }));
  app.get(`${path}/:authorisationId`, (c) => {
    const auth = findAuthorisation(resolve(c), c);
    answerHeaders(c, { approach: auth.approach });
    return c.json({
      scaStatus: auth.scaStatus,
      psuMessage: psuMessage(auth),
      trustedBeneficiaryFlag: false,
      _links: scaLinks(state, auth),
    });
  });
  app.put(`${path}/:authorisationId`, async (c) => {
    const auth = findAuthorisation(resolve(c), c);
    const body = await readJsonObject(c, { optional: true });
    assertOpen(auth);
    runStep(state, auth, { c, body, start: false });
    answerHeaders(c, { approach: auth.approach });
    return c.json(stepBody(state, auth));
  });
}

/**
 * Runs the step a request body carries. An empty body identifies the PSU: always on an update,
 * on the start only when a PSU-ID is sent.
 */
function runStep(
  state: SandboxState,
  auth: Authorisation,
  options: { c: Context; body: JsonObject; start: boolean },
) {
  const { c, body } = options;
  const psuId = headerValue(c, "PSU-ID");
  if (awaitsConfirmation(auth)) {
    const confirmation = textOf(body.confirmationCode);
    if (confirmation === undefined) {
      throw new SandboxError(400, "FORMAT_ERROR", {
        text: 'The authorisation is unconfirmed; the body must carry "confirmationCode"',
        path: "confirmationCode",
      });
    }
    confirm(state, auth, confirmation);
    return;
  }
  const code = textOf(body.scaAuthenticationData) ?? textOf(body.confirmationCode);
  if (code !== undefined) {
    auth.psuId = psuId ?? auth.psuId;
    const result = authorise(state, auth, code);
    if (!result.ok) {
      const path = "scaAuthenticationData" in body ? "scaAuthenticationData" : "confirmationCode";
      throw wrongOtp(result, path);
    }
  } else if (typeof body.authenticationMethodId === "string") {
    auth.psuId = psuId ?? auth.psuId;
    selectMethod(auth, body.authenticationMethodId);
  } else if (isObject(body.psuData)) {
    const data = body.psuData;
    const password = textOf(data.password) ?? textOf(data.encryptedPassword) ??
      textOf(data.additionalPassword) ?? textOf(data.additionalEncryptedPassword) ?? "";
    authenticate(auth, { psuId, password });
  } else if (psuId || !options.start) {
    identify(state, auth, psuId);
  }
}

function textOf(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function findAuthorisation(host: AuthorisationHost, c: Context): Authorisation {
  const auth = host.items.get(c.req.param("authorisationId") ?? "");
  if (!auth) throw resourceUnknown("Authorisation", "authorisationId");
  return auth;
}

/** A secret for an `scaRedirect` link: 32 random bytes, base64url. */
function randomToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_")
    .replace(/=+$/, "");
}
