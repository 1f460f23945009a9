/**
 * The pages of one transaction report belong to the access that read its first page (Berlin
 * Group: frequencyPerDay and a one-off consent count accesses, and a report's `next` links are
 * part of the access that got them). A read of a report that the consent's count served opens the
 * report for a while (`pages_within`); until then a further page of it is not counted again:
 * a request for the same report (the same path and query but for `pageIndex` and
 * `itemsPerPage`) that names a page, or a request for a paging link (`first`, `next`,
 * `previous`, `last`) the bank's answer to an earlier page of it gave. The markers are kept per
 * TPP and consent, so another TPP never inherits an access; a read without them counts as ever.
 */
import { answerJson } from "../src/core/answer.ts";
import type { Answer, GatewayContext } from "../src/core/check.ts";
import type { Store } from "../src/store/types.ts";
import { sha256Base64 } from "../src/signing/digest.ts";

/** The query parameters that pick a page of a report rather than the report. */
export const PAGING_PARAMETERS: readonly string[] = ["pageIndex", "itemsPerPage"];

const LINKS = ["first", "next", "previous", "prev", "last"];

/** The canonical form of a query: its pairs sorted, so the order they are sent in is no new page. */
function canonicalQuery(params: URLSearchParams, drop: readonly string[] = []): string {
  const pairs = [...params].filter(([name]) => !drop.includes(name));
  pairs.sort(([a, x], [b, y]) => a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0);
  return new URLSearchParams(pairs).toString();
}

/** Where a request's report markers live: one prefix per TPP, consent and resource. */
export interface PageKeys {
  /** `<slot tag>freq:<TPP>:<consent>:` */
  base: string;
  /** The resource's canonical path. */
  resource: string;
}

// The query is hashed so that a key's length does not grow with what a TPP sends.
function reportKey(keys: PageKeys, query: string): string {
  return `${keys.base}report:${sha256Base64(`${keys.resource}?${query}`)}`;
}

function pageKey(keys: PageKeys, query: string): string {
  return `${keys.base}page:${sha256Base64(`${keys.resource}?${query}`)}`;
}

/**
 * When the request is a further page of a report opened for this TPP and consent: the time (ms)
 * the report's access ends; else undefined. A store failure answers undefined (the read counts).
 */
export async function openReport(
  store: Store,
  options: { keys: PageKeys; url: URL; now: number },
): Promise<number | undefined> {
  const { keys, url, now } = options;
  const params = url.searchParams;
  if (params.size === 0) return undefined;
  const lookups = [pageKey(keys, canonicalQuery(params))];
  if (PAGING_PARAMETERS.some((name) => params.has(name))) {
    lookups.push(reportKey(keys, canonicalQuery(params, PAGING_PARAMETERS)));
  }
  try {
    const found = await Promise.all(lookups.map((key) => store.get(key)));
    const ends = found.map(Number).filter((end) => Number.isFinite(end) && end > now);
    return ends.length > 0 ? Math.max(...ends) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The paging links of a report answer (top level and inside `transactions`, or a card report's
 * `cardTransactions`) on this path.
 */
function pagingQueries(answer: Answer, path: string): string[] {
  const body = answerJson(answer) as Record<string, unknown> | undefined;
  const holders = [
    body?._links,
    (body?.transactions as Record<string, unknown>)?._links,
    (body?.cardTransactions as Record<string, unknown>)?._links,
  ];
  const queries: string[] = [];
  for (const links of holders) {
    if (!links || typeof links !== "object") continue;
    for (const name of LINKS) {
      const href = (links as Record<string, { href?: unknown }>)[name]?.href;
      if (typeof href !== "string") continue;
      let url: URL;
      try {
        url = new URL(href, "http://gateway.invalid");
      } catch {
        continue;
      }
      // The public href may carry a prefix in front of the gateway's own path.
      if (url.pathname.endsWith(path) && url.searchParams.size > 0) {
        queries.push(canonicalQuery(url.searchParams));
      }
    }
  }
  return queries;
}

/**
 * Keeps the markers of a served report page until `ends`: the report itself when `opened` (the
 * read the count served), and the paging links its answer gave. Failures are logged by the caller.
 */
export async function keepReport(
  store: Store,
  options: {
    c: GatewayContext;
    keys: PageKeys;
    answer: Answer;
    ends: number;
    now: number;
    opened: boolean;
  },
): Promise<void> {
  const { c, keys, answer, ends, now, opened } = options;
  const ttl = ends - now;
  if (ttl <= 0) return;
  const url = new URL(c.req.url);
  const writes = pagingQueries(answer, url.pathname).map((query) => pageKey(keys, query));
  if (opened) writes.push(reportKey(keys, canonicalQuery(url.searchParams, PAGING_PARAMETERS)));
  for (const key of writes) await store.put(key, String(ends), ttl);
}
