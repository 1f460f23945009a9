/**
 * The in-memory state of one sandbox instance: its records, its clock and its settings.
 *
 * Each `createSandbox()` owns a fresh state, so tests never see each other's payments; the
 * `/sandbox/reset` control empties it in place.
 */
import { createClock, type SandboxClock } from "./clock.ts";

/** SCA status of an authorisation sub-resource (the standard's values the sandbox uses). */
export type ScaStatus =
  | "received"
  | "psuIdentified"
  | "psuAuthenticated"
  | "scaMethodSelected"
  | "unconfirmed"
  | "finalised"
  | "failed";

/** How the PSU authenticates. */
export type ScaApproach = "REDIRECT" | "EMBEDDED" | "DECOUPLED";

/** What the TPP asked for when it created a resource or an authorisation. */
export interface TppPreferences {
  approach: ScaApproach;
  redirectUri?: string;
  nokRedirectUri?: string;
}

/** What an authorisation authorises, for the SCA page's summary. */
export type Subject =
  | { kind: "payment"; payment: Payment }
  | { kind: "cancellation"; payment: Payment }
  | { kind: "consent"; consent: Consent };

/** A resource that owns one collection of authorisation sub-resources. */
export interface AuthorisationHost {
  /** Relative href of the collection, for example `/psd2/v1/consents/{id}/authorisations`. */
  base: string;
  items: Map<string, Authorisation>;
  subject: Subject;
  /** The preferences given when the resource was created (defaults for its authorisations). */
  tpp: TppPreferences;
  /** Throws a SandboxError when the resource takes no new authorisation now. */
  checkStart(): void;
  /** Runs after an authorisation of the collection reached `finalised`. */
  finalised(auth: Authorisation): void;
  /** Runs after an authorisation of the collection reached `failed`. */
  failed(auth: Authorisation): void;
}

/** One authorisation sub-resource (of a payment, a cancellation or a consent). */
export interface Authorisation {
  id: string;
  scaStatus: ScaStatus;
  approach: ScaApproach;
  host: AuthorisationHost;
  /** The PSU who identified or logged in (PSU-ID header or the SCA page's login). */
  psuId?: string;
  /** Secret of the `scaRedirect` link (the SCA page's address). */
  redirectToken: string;
  redirectUri?: string;
  nokRedirectUri?: string;
  /** The method chosen in the embedded approach (or on the SCA page). */
  chosenMethodId?: string;
  /** Wrong OTPs so far; the third fails the authorisation. */
  failedOtps: number;
  /** Decoupled approach: when (sandbox clock, ms) the PSU's app answers by itself. */
  decoupledDueAt?: number;
  /** The code the TPP confirms an `unconfirmed` authorisation with (redirect approach). */
  confirmationCode?: string;
}

/** A payment resource (single, bulk or periodic). */
export interface Payment {
  id: string;
  service: string;
  product: string;
  /** The JSON body as given, or the XML text of a `pain.001-*` product. */
  body: Record<string, unknown> | string;
  /** The standing order of a periodic `pain.001-*` payment (the form's JSON part). */
  schedule?: Record<string, unknown>;
  transactionStatus: string;
  /** The PSU-ID the payment was initiated with. */
  psuId?: string;
  tpp: TppPreferences;
  /** What the TPP asked for with the DELETE that needs a cancellation authorisation. */
  cancellationTpp?: TppPreferences;
  /** Finalised authorisations needed: 2 for multilevel SCA, else 1. */
  requiredAuthorisations: number;
  /** Set when the funds check ran: false rejects the payment (RJCT). */
  fundsAvailable?: boolean;
  authorisations: Map<string, Authorisation>;
  cancellationAuthorisations: Map<string, Authorisation>;
}

/** Consent status as stored; `expired` by date is derived when read. */
export type ConsentStatus = "received" | "rejected" | "valid" | "expired" | "terminatedByTpp";

/** An account-access consent. */
export interface Consent {
  id: string;
  access: Record<string, unknown>;
  recurringIndicator: boolean;
  /** Last valid day, inclusive, after adjustment. */
  validUntil: string;
  frequencyPerDay: number;
  combinedServiceIndicator: boolean;
  psuId?: string;
  status: ConsentStatus;
  /** Day of the last change of status (the standard's `lastActionDate`). */
  lastActionDate: string;
  tpp: TppPreferences;
  authorisations: Map<string, Authorisation>;
  /** Per account: the last booked entry a report of this consent showed (`deltaList`). */
  delivered?: Map<string, string>;
}

/** A merchant checkout order. */
export interface Order {
  orderId: string;
  paymentHash: string;
  createdAt: Date;
  request: Record<string, unknown>;
}

/** A request the sandbox received on an interface path (what the gateway forwarded). */
export interface RecordedRequest {
  at: string;
  method: string;
  /** Path and query as received. */
  target: string;
  headers: Record<string, string>;
  /** The body text (cut after {@link MAX_RECORDED_BODY} characters). */
  body: string;
  status: number;
}

/** Requests kept by the request log, newest last. */
export const MAX_RECORDED_REQUESTS = 200;
/** Characters of a body kept by the request log. */
export const MAX_RECORDED_BODY = 16_384;

/** Settings a TPP may change through the controls. */
export interface SandboxSettings {
  /** Origin of the SCA pages (`scaRedirect` links), read when a link is made. */
  scaOrigin: () => string;
  /** Decoupled SCA: milliseconds (sandbox clock) until the PSU's app answers by itself. */
  decoupledDelayMs: number;
  /**
   * Redirect SCA ends `unconfirmed`: the browser returns to TPP-Redirect-URI with a
   * `confirmationCode`, which the TPP sends in a PUT to finalise (default off).
   */
  redirectConfirmation?: boolean;
}

/** A browser's progress on one authorisation's SCA page. */
export interface PageSession {
  id: string;
  csrf: string;
  step: "login" | "otp";
  lang: "en" | "ka";
  /** A message for the next page render (wrong password or OTP). */
  notice?: string;
}

/** Everything one sandbox instance remembers. */
export interface SandboxState {
  now: () => Date;
  clock: SandboxClock;
  settings: SandboxSettings;
  payments: Map<string, Payment>;
  consents: Map<string, Consent>;
  orders: Map<string, Order>;
  /** Every authorisation by id, and by the token of its `scaRedirect` link. */
  authorisations: Map<string, Authorisation>;
  redirects: Map<string, Authorisation>;
  /** Decoupled authorisations waiting for the PSU's app. */
  pendingDecoupled: Set<Authorisation>;
  pageSessions: Map<string, PageSession>;
  requests: RecordedRequest[];
}

/** A fresh, empty state with the given clock and settings. */
export function createState(base: () => Date, settings: SandboxSettings): SandboxState {
  const clock = createClock(base);
  return {
    now: () => clock.now(),
    clock,
    settings,
    payments: new Map(),
    consents: new Map(),
    orders: new Map(),
    authorisations: new Map(),
    redirects: new Map(),
    pendingDecoupled: new Set(),
    pageSessions: new Map(),
    requests: [],
  };
}

/** Empties the state in place and sets the clock back to its base (settings stay). */
export function resetState(state: SandboxState) {
  for (
    const map of [
      state.payments,
      state.consents,
      state.orders,
      state.authorisations,
      state.redirects,
      state.pageSessions,
    ]
  ) map.clear();
  state.pendingDecoupled.clear();
  state.requests.length = 0;
  state.clock.set(undefined);
}
