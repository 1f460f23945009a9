/**
 * Payment initiation of the legacy core: create, read, status and cancel payments, with their
 * authorisation and cancellation-authorisation sub-resources.
 *
 * Single SCA: the authorisation is created implicitly after the POST and linked by `scaStatus`.
 * Multilevel SCA (a PSU-Corporate-ID header, or the test user PSU-MULTI: two authorisations) or an
 * explicit-authorisation preference: the response carries only `startAuthorisation` (the
 * document's multilevel rule). Enough finalised authorisations run the funds check: the test user
 * PSU-NO-FUNDS is rejected (RJCT, `fundsAvailable: false`, FUNDS_NOT_AVAILABLE), others are ACCP.
 * A failed authorisation rejects the payment.
 */
import type { Context, Hono } from "hono";
import {
  answerHeaders,
  mountAuthorisations,
  preferredApproach,
  scaLinks,
  startAuthorisation,
  tppPreferences,
} from "./authorisations.ts";
import { formatError, resourceUnknown, SandboxError } from "./errors.ts";
import {
  headerIsTrue,
  headerValue,
  isObject,
  type JsonObject,
  readJsonObject,
  readText,
} from "./request.ts";
import type { AuthorisationHost, Payment, SandboxState } from "./state.ts";
import { anyHas, behaviourOf } from "./test_users.ts";

const BASE = "/psd2/v1/:service{payments|bulk-payments|periodic-payments}/:product";
const ONE = `${BASE}/:paymentId`;

/** Statuses in which a payment still waits for (more) authorisations. */
const AWAITING_SCA = ["RCVD", "PATC"];

/** Relative href of a payment. */
export function paymentHref(payment: Payment): string {
  return `/psd2/v1/${payment.service}/${payment.product}/${payment.id}`;
}

/** The payment's authorisations; enough finalised ones run the funds check (`PATC` before). */
export function paymentAuthorisations(payment: Payment): AuthorisationHost {
  return {
    base: `${paymentHref(payment)}/authorisations`,
    items: payment.authorisations,
    subject: { kind: "payment", payment },
    tpp: payment.tpp,
    checkStart() {
      if (!AWAITING_SCA.includes(payment.transactionStatus)) {
        throw statusInvalid(payment, "does not wait for an authorisation");
      }
    },
    finalised() {
      if (!AWAITING_SCA.includes(payment.transactionStatus)) return;
      const finalised = [...payment.authorisations.values()]
        .filter((a) => a.scaStatus === "finalised");
      if (finalised.length < payment.requiredAuthorisations) {
        payment.transactionStatus = "PATC";
        return;
      }
      const psuIds = [payment.psuId, ...finalised.map((a) => a.psuId)];
      payment.fundsAvailable = !anyHas(psuIds, "noFunds");
      payment.transactionStatus = payment.fundsAvailable ? "ACCP" : "RJCT";
    },
    failed() {
      if (AWAITING_SCA.includes(payment.transactionStatus)) payment.transactionStatus = "RJCT";
    },
  };
}

/** The payment's cancellation authorisations; a finalised one cancels the payment. */
export function cancellationAuthorisations(payment: Payment): AuthorisationHost {
  return {
    base: `${paymentHref(payment)}/cancellation-authorisations`,
    items: payment.cancellationAuthorisations,
    subject: { kind: "cancellation", payment },
    tpp: payment.cancellationTpp ?? payment.tpp,
    checkStart() {
      if (payment.transactionStatus !== "ACTC") {
        throw statusInvalid(payment, "has no cancellation waiting for authorisation");
      }
    },
    finalised() {
      if (payment.transactionStatus === "ACTC") payment.transactionStatus = "CANC";
    },
    failed() {},
  };
}

/** The message of a payment rejected by the funds check (none for other payments). */
export function fundsMessages(payment: Payment): JsonObject {
  if (payment.fundsAvailable !== false) return {};
  const text = "Insufficient funds on the debtor account (ISO 20022 reason AM04)";
  return { tppMessages: [{ category: "ERROR", code: "FUNDS_NOT_AVAILABLE", path: "", text }] };
}

/** Mounts the payment initiation routes on the app. */
export function mountPayments(app: Hono, state: SandboxState) {
  const find = (c: Context) => findPayment(state, c);
  app.post(BASE, async (c) => {
    const payment = await createPayment(c);
    state.payments.set(payment.id, payment);
    const href = paymentHref(payment);
    const links: Record<string, { href: string }> = {
      self: { href },
      status: { href: `${href}/status` },
    };
    const explicit = payment.requiredAuthorisations > 1 ||
      headerIsTrue(c, "TPP-Explicit-Authorisation-Preferred");
    if (explicit) {
      links.startAuthorisation = { href: `${href}/authorisations` };
    } else {
      const host = paymentAuthorisations(payment);
      Object.assign(links, scaLinks(state, startAuthorisation(state, { c, host })));
    }
    answerHeaders(c, { location: href, approach: payment.tpp.approach });
    const body = { transactionStatus: payment.transactionStatus, paymentId: payment.id };
    return c.json({ ...body, _links: links }, 201);
  });
  app.get(ONE, (c) => {
    const payment = find(c);
    if (typeof payment.body === "string") {
      return c.body(payment.body, 200, { "content-type": "application/xml" });
    }
    const status = { transactionStatus: payment.transactionStatus };
    return c.json({ ...payment.body, ...status, ...fundsMessages(payment) });
  });
  app.get(`${ONE}/status`, (c) => {
    const payment = find(c);
    const body: JsonObject = { transactionStatus: payment.transactionStatus };
    if (payment.fundsAvailable === false) {
      body.fundsAvailable = false;
      body.psuMessage = "The payment was rejected: the account has insufficient funds";
    }
    return c.json({ ...body, ...fundsMessages(payment) });
  });
  app.delete(ONE, (c) => {
    const payment = find(c);
    const status = payment.transactionStatus;
    if (status === "RCVD") {
      payment.transactionStatus = "CANC";
      return c.body(null, 204);
    }
    if (!["ACCP", "PATC", "ACTC"].includes(status)) {
      throw new SandboxError(405, "CANCELLATION_INVALID", {
        text: `Payment "${payment.id}" with status "${status}" cannot be cancelled`,
        path: "paymentId",
      });
    }
    payment.transactionStatus = "ACTC";
    // The cancellation's own preferences, over those the payment was initiated with.
    const given = tppPreferences(c);
    payment.cancellationTpp = {
      approach: preferredApproach(c) ?? payment.tpp.approach,
      redirectUri: given.redirectUri ?? payment.tpp.redirectUri,
      nokRedirectUri: given.nokRedirectUri ?? payment.tpp.nokRedirectUri,
    };
    answerHeaders(c, { approach: payment.cancellationTpp.approach });
    const href = paymentHref(payment);
    const links = {
      self: { href },
      status: { href: `${href}/status` },
      startAuthorisation: { href: `${href}/cancellation-authorisations` },
    };
    return c.json({ transactionStatus: "ACTC", _links: links }, 202);
  });
  mountAuthorisations(app, {
    state,
    path: `${ONE}/authorisations`,
    resolve: (c) => paymentAuthorisations(find(c)),
  });
  mountAuthorisations(app, {
    state,
    path: `${ONE}/cancellation-authorisations`,
    resolve: (c) => cancellationAuthorisations(find(c)),
  });
}

async function createPayment(c: Context): Promise<Payment> {
  const type = (c.req.header("content-type") ?? "").toLowerCase();
  const xml = type.includes("xml");
  let body: Payment["body"];
  let schedule: JsonObject | undefined;
  if (type.startsWith("multipart/form-data")) {
    ({ xml: body, schedule } = await readPeriodicForm(c));
  } else if (xml) {
    body = await readText(c);
    if (body.trim() === "") throw formatError("Request body must not be empty");
  } else {
    body = await readJsonObject(c);
  }
  const psuId = headerValue(c, "PSU-ID");
  const multilevel = headerValue(c, "PSU-Corporate-ID") !== undefined ||
    behaviourOf(psuId) === "multilevel";
  return {
    id: crypto.randomUUID(),
    service: c.req.param("service") ?? "payments",
    product: c.req.param("product") ?? "",
    body,
    transactionStatus: "RCVD",
    psuId,
    tpp: tppPreferences(c),
    requiredAuthorisations: multilevel ? 2 : 1,
    ...(schedule ? { schedule } : {}),
    authorisations: new Map(),
    cancellationAuthorisations: new Map(),
  };
}

/**
 * The periodic pain.001 form: part `xml_sct` (the pain.001 document) and part
 * `json_standingorderType` (the schedule, a JSON object); a missing or unreadable part is 400.
 */
async function readPeriodicForm(c: Context): Promise<{ xml: string; schedule: JsonObject }> {
  let form: FormData;
  try {
    // The request log has read the body as text already; the form is parsed from that text.
    const type = c.req.header("content-type") ?? "";
    form = await new Response(await readText(c), { headers: { "content-type": type } }).formData();
  } catch {
    throw formatError("Request body is not a valid multipart/form-data form");
  }
  const text = async (name: string) => {
    const part = form.get(name);
    const value = typeof part === "string" ? part : part ? await part.text() : "";
    if (value.trim() === "") throw formatError(`Form part "${name}" is missing`, name);
    return value;
  };
  const xml = await text("xml_sct");
  let schedule: unknown;
  try {
    schedule = JSON.parse(await text("json_standingorderType"));
  } catch (error) {
    if (error instanceof SandboxError) throw error;
    throw formatError(
      'Form part "json_standingorderType" is not valid JSON',
      "json_standingorderType",
    );
  }
  if (!isObject(schedule)) {
    throw formatError(
      'Form part "json_standingorderType" must be a JSON object',
      "json_standingorderType",
    );
  }
  return { xml, schedule };
}

function findPayment(state: SandboxState, c: Context): Payment {
  const payment = state.payments.get(c.req.param("paymentId") ?? "");
  const matches = payment && payment.service === c.req.param("service") &&
    payment.product === c.req.param("product");
  if (!matches) throw resourceUnknown("Payment", "paymentId");
  return payment;
}

function statusInvalid(payment: Payment, what: string): SandboxError {
  return new SandboxError(409, "STATUS_INVALID", {
    text: `Payment "${payment.id}" with status "${payment.transactionStatus}" ${what}`,
    path: "paymentId",
  });
}
