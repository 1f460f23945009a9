/**
 * Which booked entries a transaction report shows: delta reports (`entryReferenceFrom`, the
 * entries after the one named; `deltaList=true`, the entries booked since this consent's last
 * report of the account) and pages (`itemsPerPage`, `pageIndex` from 0) with the standard's
 * `first`, `previous`, `next` and `last` links.
 *
 * Paging applies to the booked entries; pending and information entries come with the first
 * page. A request that names neither parameter gets the whole report, without paging links.
 */
import type { Context } from "hono";
import { formatError } from "./errors.ts";
import { isIsoDate, isoDate } from "./dates.ts";
import type { Consent } from "./state.ts";

/** Entries per page when only `pageIndex` is given. */
export const DEFAULT_ITEMS_PER_PAGE = 10;

/** A booked entry as far as delta reports need it. */
interface Entry {
  transactionId: string;
}

/** Whether a query flag is `true`, in any case (`withBalance=TRUE`). */
export function queryIsTrue(c: Context, name: string): boolean {
  return c.req.query(name)?.toLowerCase() === "true";
}

/**
 * The booked entries a delta report shows, or all of them. `entryReferenceFrom` names an entry
 * by its `entryReference` (the sandbox's entries use their transaction id); an unknown one is
 * 400 FORMAT_ERROR. `deltaList` remembers, per consent and account, the last entry reported.
 */
export function deltaOf<T extends Entry>(
  c: Context,
  options: { booked: T[]; consent: Consent; accountId: string },
): T[] {
  const { booked, consent, accountId } = options;
  let shown = booked;
  const from = c.req.query("entryReferenceFrom");
  if (from !== undefined && from !== "") {
    const at = booked.findIndex((t) => t.transactionId === from);
    if (at < 0) {
      throw formatError(
        `Query "entryReferenceFrom" names no entry: "${from}"`,
        "entryReferenceFrom",
      );
    }
    shown = booked.slice(at + 1);
  }
  const delivered = (consent.delivered ??= new Map());
  if (queryIsTrue(c, "deltaList")) {
    const last = delivered.get(accountId);
    const at = last === undefined ? -1 : booked.findIndex((t) => t.transactionId === last);
    shown = shown.filter((t) => booked.indexOf(t) > at);
  }
  const newest = shown.at(-1);
  if (newest) {
    const before = delivered.get(accountId);
    const known = before === undefined ? -1 : booked.findIndex((t) => t.transactionId === before);
    if (booked.indexOf(newest) > known) delivered.set(accountId, newest.transactionId);
  }
  return shown;
}

/** One page of a report. */
export interface Page<T> {
  entries: T[];
  /** The page's index, or undefined when the request asked for no page. */
  index?: number;
  /** `first`, `previous`, `next`, `last` links (empty without paging). */
  links: Record<string, { href: string }>;
}

/** The page of `entries` the request asks for, with links to the others under `href`. */
export function pageOf<T>(c: Context, options: { entries: T[]; href: string }): Page<T> {
  const { entries, href } = options;
  const size = readInt(c, "itemsPerPage", 1);
  const index = readInt(c, "pageIndex", 0);
  if (size === undefined && index === undefined) return { entries, links: {} };
  const perPage = size ?? DEFAULT_ITEMS_PER_PAGE;
  const lastIndex = Math.max(0, Math.ceil(entries.length / perPage) - 1);
  const at = index ?? 0;
  if (at > lastIndex) {
    throw formatError(
      `Query "pageIndex" must be at most ${lastIndex} with "itemsPerPage" ${perPage}`,
      "pageIndex",
    );
  }
  const query = new URL(c.req.url).searchParams;
  query.set("itemsPerPage", String(perPage));
  const link = (page: number) => {
    query.set("pageIndex", String(page));
    return { href: `${href}?${query}` };
  };
  const links: Record<string, { href: string }> = { first: link(0) };
  if (at > 0) links.previous = link(at - 1);
  if (at < lastIndex) links.next = link(at + 1);
  links.last = link(lastIndex);
  return { entries: entries.slice(at * perPage, (at + 1) * perPage), index: at, links };
}

function readInt(c: Context, name: string, min: number): number | undefined {
  const value = c.req.query(name);
  if (value === undefined || value === "") return undefined;
  const n = /^[0-9]{1,9}$/.test(value) ? Number(value) : NaN;
  if (!(n >= min)) throw formatError(`Query "${name}" must be an integer from ${min}`, name);
  return n;
}

/**
 * A report's filters from its query: bookingStatus (one of `statuses`: an account's or a card
 * account's), dateFrom (from the start when absent) and dateTo (today when absent).
 */
export function readFilters(c: Context, now: Date, statuses: readonly string[]) {
  const status = c.req.query("bookingStatus") ?? "";
  if (!statuses.includes(status)) {
    throw formatError(
      `Query "bookingStatus" must be one of ${statuses.join(", ")}`,
      "bookingStatus",
    );
  }
  return {
    status,
    from: readDate(c, "dateFrom") ?? "0000-01-01",
    to: readDate(c, "dateTo") ?? isoDate(now),
  };
}

function readDate(c: Context, name: string): string | undefined {
  const value = c.req.query(name);
  if (value === undefined || value === "") return undefined;
  if (!isIsoDate(value)) {
    throw formatError(`Query "${name}" must be a date written YYYY-MM-DD`, name);
  }
  return value;
}
