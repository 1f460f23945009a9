/**
 * Merchant checkout orders of the legacy core (001, deprecated): create an order and read it.
 *
 * A MANUAL capture blocks the amount; a block not completed within 30 days is released
 * automatically (001), so the hold reads `BLOCKED` until 30 days after creation per the
 * sandbox clock and `RELEASED` from that instant on. AUTOMATIC capture (the default) has no hold.
 */
import type { Context, Hono } from "hono";
import { BANK_SCA_ORIGIN } from "./authorisations.ts";
import { addDays } from "./dates.ts";
import { resourceUnknown, SandboxError } from "./errors.ts";
import { isObject, readJsonObject } from "./request.ts";
import type { Order, SandboxState } from "./state.ts";
import { statementText } from "./statement_text.ts";

/** Days after which a MANUAL capture hold is released automatically. */
export const HOLD_DAYS = 30;

const ORDERS = "/api/v1/checkout/orders";

/** Mounts the checkout order routes on the app. */
export function mountCheckout(app: Hono, state: SandboxState) {
  app.post(ORDERS, async (c) => {
    requireBearer(c);
    const request = await readJsonObject(c);
    const orderId = crypto.randomUUID();
    const order: Order = {
      orderId,
      paymentHash: await sha256Hex(`${orderId}|${JSON.stringify(request)}`),
      createdAt: state.now(),
      request,
    };
    state.orders.set(orderId, order);
    const origin = new URL(c.req.url).origin;
    c.header("Location", `${origin}${ORDERS}/${orderId}`);
    return c.json({
      status: "CREATED",
      payment_hash: order.paymentHash,
      links: [
        { href: `${origin}${ORDERS}/${orderId}`, rel: "self", method: "GET", order_id: orderId },
        {
          href: `${BANK_SCA_ORIGIN}/checkout/${orderId}/approve`,
          rel: "approve",
          method: "REDIRECT",
          order_id: orderId,
        },
      ],
    }, 201);
  });
  app.get(`${ORDERS}/:orderId`, (c) => {
    requireBearer(c);
    const order = state.orders.get(c.req.param("orderId") ?? "");
    if (!order) throw resourceUnknown("Order", "order_id");
    return c.json(orderView(order, state.now()));
  });
}

function orderView(order: Order, now: Date) {
  const r = order.request;
  const captureMethod = r.capture_method === "MANUAL" ? "MANUAL" : "AUTOMATIC";
  const view: Record<string, unknown> = {
    order_id: order.orderId,
    status: "CREATED",
    intent: r.intent,
    capture_method: captureMethod,
    locale: r.locale,
    shop_order_id: r.shop_order_id,
    redirect_url: r.redirect_url,
    items: r.items,
    purchase_units: r.purchase_units,
    statement_text: statementText(r),
    payment_hash: order.paymentHash,
    create_time: order.createdAt.toISOString(),
  };
  if (captureMethod === "MANUAL") {
    const releaseAt = addDays(order.createdAt, HOLD_DAYS);
    const released = now.getTime() >= releaseAt.getTime();
    view.hold = {
      status: released ? "RELEASED" : "BLOCKED",
      amount: { currency_code: "GEL", value: holdAmount(r.purchase_units) },
      blocked_at: order.createdAt.toISOString(),
      release_at: releaseAt.toISOString(),
    };
  }
  return view;
}

function holdAmount(units: unknown): number {
  if (!Array.isArray(units)) return 0;
  const cents = units.reduce((sum: number, unit) => {
    const value = isObject(unit) && isObject(unit.amount) ? Number(unit.amount.value) : 0;
    return Number.isFinite(value) ? sum + Math.round(value * 100) : sum;
  }, 0);
  return cents / 100;
}

function requireBearer(c: Context) {
  if (/^Bearer\s+\S+/i.test(c.req.header("Authorization") ?? "")) return;
  throw new SandboxError(401, "TOKEN_INVALID", {
    text: 'Header "Authorization" must carry a bearer token',
    path: "Authorization",
  });
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}
