/**
 * The public product catalogue (001): paged listings per locale and category, and one product
 * by id.
 *
 * Paging: `page` from 0, `page-size` (default 10). Links are absolute
 * (`<request origin><path>?page=N&page-size=M`) as the legacy core writes them; `next` appears
 * when more products follow, `prev` when page > 0. Without a locale the texts are Georgian.
 */
import type { Context, Hono } from "hono";
import { formatError, resourceUnknown } from "./errors.ts";
import { type Locale, LOCALES, PRODUCTS } from "./product_records.ts";
import type { Category } from "./product_specs.ts";

/** Page size when the request names none. */
export const DEFAULT_PAGE_SIZE = 10;

/** Listing path segments and the category each one lists. */
export const LISTINGS: Readonly<Record<string, Category>> = {
  deposits: "TERM_DEPOSITS",
  "personal-loans": "PERS_LOANS",
  cards: "CRED_AND_CHRG_CARDS",
  "business-loans": "BUSINESS_LOANS",
};

const INT32_MAX = 2 ** 31 - 1;

/** Mounts the catalogue routes; literal listings are mounted before `{locale}` so they win. */
export function mountProducts(app: Hono) {
  for (const [segment, category] of Object.entries(LISTINGS)) {
    app.get(`/v1/products/${segment}`, (c) => listing(c, { locale: "ge", category }));
  }
  app.get("/v1/product/:id", (c) => {
    const product = PRODUCTS.ge.find((p) => p.productId === c.req.param("id"));
    if (!product) throw resourceUnknown("Product", "id");
    const url = new URL(c.req.url);
    return c.json({ product, _links: { self: { href: `${url.origin}${url.pathname}` } } });
  });
  app.get("/v1/products/:locale", (c) => listing(c, { locale: localeOf(c) }));
  for (const [segment, category] of Object.entries(LISTINGS)) {
    app.get(`/v1/products/:locale/${segment}`, (c) => {
      return listing(c, { locale: localeOf(c), category });
    });
  }
}

function localeOf(c: Context): Locale {
  const locale = c.req.param("locale");
  const known = LOCALES.find((l) => l === locale);
  if (!known) throw resourceUnknown(`Locale "${locale}"`, "locale");
  return known;
}

function listing(c: Context, options: { locale: Locale; category?: Category }): Response {
  const page = readInt(c, { name: "page", fallback: 0, min: 0 });
  const size = readInt(c, { name: "page-size", fallback: DEFAULT_PAGE_SIZE, min: 1 });
  const all = PRODUCTS[options.locale].filter((p) =>
    !options.category || p.productCategory === options.category
  );
  const last = Math.max(0, Math.ceil(all.length / size) - 1);
  const url = new URL(c.req.url);
  const href = (n: number) => ({
    href: `${url.origin}${url.pathname}?page=${n}&page-size=${size}`,
  });
  const links: Record<string, { href: string }> = { self: href(page), first: href(0) };
  if ((page + 1) * size < all.length) links.next = href(page + 1);
  if (page > 0) links.prev = href(Math.min(page - 1, last));
  links.last = href(last);
  return c.json({ products: all.slice(page * size, (page + 1) * size), _links: links });
}

function readInt(c: Context, options: { name: string; fallback: number; min: number }): number {
  const raw = c.req.query(options.name);
  if (raw === undefined) return options.fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < options.min || value > INT32_MAX) {
    const what = options.min === 0 ? "a non-negative integer" : "a positive integer";
    throw formatError(`Query "${options.name}" must be ${what}`, options.name);
  }
  return value;
}
