/**
 * Signing baskets of the legacy core (Berlin Group 1.3.11): payments and consents of one TPP that
 * the PSU authorises together with one SCA. A basket takes only payments and consents that exist,
 * wait for their first authorisation (payment RCVD, consent received), are in no other open basket
 * and were created by the same TPP; it is created with an explicit authorisation start only (the
 * standard's example). Its authorisations run the sandbox's SCA flow (src/sandbox/sca_flow.ts); a
 * finalised one authorises every payment and consent in it, each as its own authorisation would
 * (a payment ACCP, or PATC under multilevel SCA; a consent valid), and the basket becomes ACTC
 * (PATC while a payment needs another authorisation); a failed one rejects them all (RJCT).
 *
 * The sandbox knows a TPP by the `client_id` of its bearer token (the gateway verified the token);
 * a request without one belongs to no TPP, and so do the resources it creates.
 */
import type { Context, Hono } from "hono";
import { answerHeaders, mountAuthorisations, tppPreferences } from "./authorisations.ts";
import { consentAuthorisations } from "./consents.ts";
import { effectiveStatus } from "./consent_rules.ts";
import { formatError, resourceUnknown, SandboxError } from "./errors.ts";
import { paymentAuthorisations } from "./payments.ts";
import { isObject, readJsonObject } from "./request.ts";
import type {
  Authorisation,
  AuthorisationHost,
  Consent,
  Payment,
  SandboxState,
  TppPreferences,
} from "./state.ts";

const BASE = "/psd2/v1/signing-baskets";
const ONE = `${BASE}/:basketId`;

/** A signing basket. */
export interface Basket {
  id: string;
  payments: Payment[];
  consents: Consent[];
  /** RCVD until authorised; ACTC, PATC (a payment needs another authorisation), RJCT, CANC. */
  transactionStatus: "RCVD" | "PATC" | "ACTC" | "RJCT" | "CANC";
  /** The TPP that created it (its token's client_id). */
  tppId?: string;
  tpp: TppPreferences;
  authorisations: Map<string, Authorisation>;
}

/** Per sandbox state: its baskets, and the TPP that created each payment and consent. */
interface BasketBook {
  baskets: Map<string, Basket>;
  owners: WeakMap<Payment | Consent, string>;
}

const BOOKS = new WeakMap<SandboxState, BasketBook>();

function bookOf(state: SandboxState): BasketBook {
  let book = BOOKS.get(state);
  if (!book) BOOKS.set(state, book = { baskets: new Map(), owners: new WeakMap() });
  return book;
}

/** The TPP of a request: its bearer token's `client_id`, read without verification. */
export function tppOf(c: Context): string | undefined {
  const token = /^Bearer\s+([^.\s]+)\.([^.\s]+)\./i.exec(c.req.header("authorization") ?? "");
  if (!token) return undefined;
  try {
    const json = atob(token[2].replace(/-/g, "+").replace(/_/g, "/"));
    const claims: unknown = JSON.parse(json);
    const id = isObject(claims) ? claims.client_id : undefined;
    return typeof id === "string" && id !== "" ? id : undefined;
  } catch {
    return undefined;
  }
}

/** Relative href of a basket. */
export function basketHref(basket: Basket): string {
  return `${BASE}/${basket.id}`;
}

/** The basket's authorisations: a finalised one authorises every payment and consent in it. */
export function basketAuthorisations(state: SandboxState, basket: Basket): AuthorisationHost {
  const hosts = () => [
    ...basket.payments.map((p) => ({ items: p.authorisations, host: paymentAuthorisations(p) })),
    ...basket.consents.map((c) => ({
      items: c.authorisations,
      host: consentAuthorisations(state, c),
    })),
  ];
  const first = basket.payments[0];
  return {
    base: `${basketHref(basket)}/authorisations`,
    items: basket.authorisations,
    // The SCA page summarises the basket's first payment (or consent).
    subject: first
      ? { kind: "payment", payment: first }
      : { kind: "consent", consent: basket.consents[0] },
    tpp: basket.tpp,
    checkStart() {
      if (basket.transactionStatus !== "RCVD" && basket.transactionStatus !== "PATC") {
        throw new SandboxError(409, "STATUS_INVALID", {
          text:
            `Signing basket "${basket.id}" with status "${basket.transactionStatus}" takes no authorisation`,
          path: "basketId",
        });
      }
    },
    finalised(auth) {
      // Each resource counts the basket's authorisation as one of its own.
      for (const { items, host } of hosts()) {
        items.set(auth.id, auth);
        host.finalised(auth);
      }
      const more = basket.payments.some((p) => p.transactionStatus === "PATC");
      basket.transactionStatus = more ? "PATC" : "ACTC";
    },
    failed(auth) {
      for (const { items, host } of hosts()) {
        items.set(auth.id, auth);
        host.failed(auth);
      }
      basket.transactionStatus = "RJCT";
    },
  };
}

/**
 * Mounts the signing basket routes, and the middleware that notes which TPP created each payment
 * and consent: mount it before the payment and consent routes.
 */
export function mountBaskets(app: Hono, state: SandboxState) {
  const book = bookOf(state);
  app.use("/psd2/v1/*", async (c, next) => {
    await next();
    if (c.req.method !== "POST" || c.res.status !== 201) return;
    const tpp = tppOf(c);
    if (!tpp) return;
    const body: unknown = await c.res.clone().json().catch(() => undefined);
    if (!isObject(body)) return;
    const made = typeof body.paymentId === "string"
      ? state.payments.get(body.paymentId)
      : typeof body.consentId === "string"
      ? state.consents.get(body.consentId)
      : undefined;
    if (made) book.owners.set(made, tpp);
  });
  const find = (c: Context) => findBasket(state, c);
  app.post(BASE, async (c) => {
    const body = await readJsonObject(c);
    const basket: Basket = {
      id: crypto.randomUUID(),
      payments: ids(body, "paymentIds").map((id, i) => payment(state, c, { id, i })),
      consents: ids(body, "consentIds").map((id, i) => consent(state, c, { id, i })),
      transactionStatus: "RCVD",
      tppId: tppOf(c),
      tpp: tppPreferences(c),
      authorisations: new Map(),
    };
    if (basket.payments.length + basket.consents.length === 0) {
      throw formatError("The basket must carry at least one of paymentIds, consentIds");
    }
    book.baskets.set(basket.id, basket);
    const href = basketHref(basket);
    const links = {
      self: { href },
      status: { href: `${href}/status` },
      startAuthorisation: { href: `${href}/authorisations` },
    };
    answerHeaders(c, { location: href, approach: basket.tpp.approach });
    const answer = { transactionStatus: basket.transactionStatus, basketId: basket.id };
    return c.json({ ...answer, _links: links }, 201);
  });
  app.get(ONE, (c) => {
    const basket = find(c);
    const body: Record<string, unknown> = {};
    if (basket.payments.length > 0) body.payments = basket.payments.map((p) => p.id);
    if (basket.consents.length > 0) body.consents = basket.consents.map((k) => k.id);
    const href = basketHref(basket);
    const links = { self: { href }, status: { href: `${href}/status` } };
    return c.json({ ...body, transactionStatus: basket.transactionStatus, _links: links });
  });
  app.get(`${ONE}/status`, (c) => c.json({ transactionStatus: find(c).transactionStatus }));
  app.delete(ONE, (c) => {
    const basket = find(c);
    // The standard: deletable as long as no (partial) authorisation has been applied.
    if (basket.transactionStatus !== "RCVD") {
      throw new SandboxError(409, "STATUS_INVALID", {
        text:
          `Signing basket "${basket.id}" with status "${basket.transactionStatus}" cannot be deleted`,
        path: "basketId",
      });
    }
    basket.transactionStatus = "CANC";
    return c.body(null, 204);
  });
  mountAuthorisations(app, {
    state,
    path: `${ONE}/authorisations`,
    resolve: (c) => basketAuthorisations(state, find(c)),
  });
}

function ids(body: Record<string, unknown>, field: string): string[] {
  const list = body[field];
  if (list === undefined) return [];
  if (!Array.isArray(list) || !list.every((id) => typeof id === "string")) {
    throw formatError(`Field "${field}" must be a list of ids`, field);
  }
  return [...new Set(list)];
}

/** The basket a payment or consent is in now (one not deleted, not rejected). */
function openBasketOf(state: SandboxState, item: Payment | Consent): Basket | undefined {
  for (const basket of bookOf(state).baskets.values()) {
    if (basket.transactionStatus === "CANC" || basket.transactionStatus === "RJCT") continue;
    if ((basket.payments as unknown[]).includes(item)) return basket;
    if ((basket.consents as unknown[]).includes(item)) return basket;
  }
  return undefined;
}

/** Refuses an id that is unknown, another TPP's, not waiting for authorisation or basketed. */
function admit<T extends Payment | Consent>(
  state: SandboxState,
  c: Context,
  options: { item: T | undefined; path: string; what: string; status: (item: T) => string },
): T {
  const { item, path, what } = options;
  if (!item || bookOf(state).owners.get(item) !== tppOf(c)) {
    throw new SandboxError(400, "RESOURCE_UNKNOWN", { text: `${what} is unknown`, path });
  }
  const status = options.status(item);
  const waiting = status === "RCVD" || status === "received";
  const inBasket = openBasketOf(state, item);
  if (!waiting || inBasket) {
    const why = inBasket
      ? `is in signing basket "${inBasket.id}" already`
      : `with status "${status}" waits for no authorisation`;
    throw new SandboxError(409, "STATUS_INVALID", { text: `${what} ${why}`, path });
  }
  return item;
}

function payment(state: SandboxState, c: Context, at: { id: string; i: number }): Payment {
  return admit(state, c, {
    item: state.payments.get(at.id),
    path: `paymentIds[${at.i}]`,
    what: `Payment "${at.id}"`,
    status: (p) => p.transactionStatus,
  });
}

function consent(state: SandboxState, c: Context, at: { id: string; i: number }): Consent {
  return admit(state, c, {
    item: state.consents.get(at.id),
    path: `consentIds[${at.i}]`,
    what: `Consent "${at.id}"`,
    status: (k) => effectiveStatus(k, state.now()),
  });
}

function findBasket(state: SandboxState, c: Context): Basket {
  const basket = bookOf(state).baskets.get(c.req.param("basketId") ?? "");
  // After /sandbox/reset the payments are gone, and so is the basket.
  const alive = basket && basket.payments.every((p) => state.payments.get(p.id) === p) &&
    basket.consents.every((k) => state.consents.get(k.id) === k);
  if (!alive || basket.transactionStatus === "CANC") {
    throw resourceUnknown("Signing basket", "basketId");
  }
  return basket;
}
