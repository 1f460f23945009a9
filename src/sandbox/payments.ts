/**
 * Payment initiation of the legacy core: create, read, status and cancel payments, with their
 * authorisation and cancellation-authorisation sub-resources.
 *
 * Single SCA: the authorisation is created implicitly after the POST and linked by `scaStatus`.
 * Multilevel SCA (a PSU-Corporate-ID header: two PSUs authorise) or an explicit-authorisation
 * preference: the response carries only `startAuthorisation` (the document's multilevel rule).
 */
import type { Context, Hono } from "hono";
import {
  type AuthorisationHost,
  mountAuthorisations,
  scaLinks,
  startAuthorisation,
} from "./authorisations.ts";
import { formatError, resourceUnknown, SandboxError } from "./errors.ts";
import { headerIsTrue, headerValue, readJsonObject, readText } from "./request.ts";
import type { Payment, SandboxState } from "./state.ts";

const BASE = "/psd2/v1/:service{payments|bulk-payments|periodic-payments}/:product";
const ONE = `${BASE}/:paymentId`;

/** Statuses in which a payment still waits for (more) authorisations. */
const AWAITING_SCA = ["RCVD", "PATC"];

/** Relative href of a payment. */
export function paymentHref(payment: Payment): string {
  return `/psd2/v1/${payment.service}/${payment.product}/${payment.id}`;
}

/** The payment's authorisations; enough finalised ones make it `ACCP` (`PATC` in between). */
export function paymentAuthorisations(payment: Payment): AuthorisationHost {
  return {
    base: `${paymentHref(payment)}/authorisations`,
    items: payment.authorisations,
    checkStart() {
      if (!AWAITING_SCA.includes(payment.transactionStatus)) {
        throw statusInvalid(payment, "does not wait for an authorisation");
      }
    },
    finalised() {
      if (!AWAITING_SCA.includes(payment.transactionStatus)) return;
      const done = [...payment.authorisations.values()]
        .filter((a) => a.scaStatus === "finalised").length;
      payment.transactionStatus = done >= payment.requiredAuthorisations ? "ACCP" : "PATC";
    },
  };
}

/** The payment's cancellation authorisations; a finalised one cancels the payment. */
export function cancellationAuthorisations(payment: Payment): AuthorisationHost {
  return {
    base: `${paymentHref(payment)}/cancellation-authorisations`,
    items: payment.cancellationAuthorisations,
    checkStart() {
      if (payment.transactionStatus !== "ACTC") {
        throw statusInvalid(payment, "has no cancellation waiting for authorisation");
      }
    },
    finalised() {
      if (payment.transactionStatus === "ACTC") payment.transactionStatus = "CANC";
    },
  };
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
      Object.assign(links, scaLinks(host, startAuthorisation(host, { c })));
    }
    const body = { transactionStatus: payment.transactionStatus, paymentId: payment.id };
    return c.json({ ...body, _links: links }, 201);
  });
  app.get(ONE, (c) => {
    const payment = find(c);
    if (typeof payment.body === "string") {
      return c.body(payment.body, 200, { "content-type": "application/xml" });
    }
    return c.json({ ...payment.body, transactionStatus: payment.transactionStatus });
  });
  app.get(`${ONE}/status`, (c) => c.json({ transactionStatus: find(c).transactionStatus }));
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
    const href = paymentHref(payment);
    const links = {
      self: { href },
      status: { href: `${href}/status` },
      startAuthorisation: { href: `${href}/cancellation-authorisations` },
    };
    return c.json({ transactionStatus: "ACTC", _links: links }, 202);
  });
  mountAuthorisations(app, {
    path: `${ONE}/authorisations`,
    resolve: (c) => paymentAuthorisations(find(c)),
  });
  mountAuthorisations(app, {
    path: `${ONE}/cancellation-authorisations`,
    resolve: (c) => cancellationAuthorisations(find(c)),
  });
}

async function createPayment(c: Context): Promise<Payment> {
  const xml = (c.req.header("content-type") ?? "").toLowerCase().includes("xml");
  let body: Payment["body"];
  if (xml) {
    body = await readText(c);
    if (body.trim() === "") throw formatError("Request body must not be empty");
  } else {
    body = await readJsonObject(c);
  }
  return {
    id: crypto.randomUUID(),
    service: c.req.param("service") ?? "payments",
    product: c.req.param("product") ?? "",
    body,
    transactionStatus: "RCVD",
    requiredAuthorisations: headerValue(c, "PSU-Corporate-ID") ? 2 : 1,
    authorisations: new Map(),
    cancellationAuthorisations: new Map(),
  };
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
