/**
 * `query_params`: the query of the operation. The transaction list needs bookingStatus (one of
 * information, booked, pending, both, all), ISO dates, and dateFrom unless delta access
 * (entryReferenceFrom or deltaList) or bookingStatus information is used, and may page with the
 * Berlin Group's pageIndex (from 0) and itemsPerPage (from 1); a card account's transaction list
 * the same, but with bookingStatus booked, pending or both and without withBalance (1.3.11's
 * `bookingStatusCard`); the product catalogue
 * pages with page (int32 from 0) and page-size (int32 up to the policy's maximum); the installment
 * calculator needs amount (a decimal string) and client_id. Everywhere: a parameter given twice,
 * or with control characters, is refused (the core might read another copy than the gateway
 * checked), and parameters the operation does not define are refused or let through (policy).
 */
import { z } from "zod";
import { defineCheck, modal } from "../src/core/check.ts";
import type { Operation } from "../src/psd2/catalogue.ts";
import { formatError, GatewayError } from "../src/psd2/errors.ts";
import { isIsoDate } from "../src/lib/dates.ts";
import { idProblem } from "../src/lib/ids.ts";
import { AMOUNT } from "../src/bodies/amount.ts";
import { hasControl } from "../src/lib/controls.ts";
import {
  BOOKING_STATUS as BOOKING_ALL,
  CARD_BOOKING_STATUS,
  INT32_MAX,
  queryParameters,
} from "../src/bodies/query.ts";

const BOOKING_STATUS: readonly string[] = BOOKING_ALL;
const CARD_STATUS: readonly string[] = CARD_BOOKING_STATUS;

/** The names of the query parameters the operation defines (000 and 001). */
function knownParams(op: Operation): string[] {
  return queryParameters(op, INT32_MAX).map((parameter) => parameter.name);
}

/** A boolean parameter: true or false in any case (`withBalance=TRUE`), as a JSON boolean reads. */
function boolean(query: URLSearchParams, name: string): void {
  const value = query.get(name)?.toLowerCase();
  if (value !== undefined && value !== "true" && value !== "false") {
    throw formatError(name, `Query parameter "${name}" must be "true" or "false" (any case)`);
  }
}

function int32(query: URLSearchParams, name: string, min: number, max: number): void {
  const value = query.get(name);
  if (value === null) return;
  if (!/^(0|[1-9][0-9]{0,9})$/.test(value) || Number(value) < min || Number(value) > max) {
    throw formatError(name, `Query parameter "${name}" must be an integer from ${min} to ${max}`);
  }
}

function date(query: URLSearchParams, name: string): void {
  const value = query.get(name);
  if (value !== null && !isIsoDate(value)) {
    throw formatError(name, `Query parameter "${name}" must be a date like 2025-12-31`);
  }
}

/** The rules of a transaction list whose bookingStatus takes `statuses`. */
function transactionList(statuses: readonly string[]): (query: URLSearchParams) => void {
  return (query) => reportQuery(query, statuses);
}

function reportQuery(query: URLSearchParams, statuses: readonly string[]): void {
  const status = query.get("bookingStatus");
  if (status === null) {
    throw formatError("bookingStatus", 'Query parameter "bookingStatus" is required');
  }
  if (!statuses.includes(status)) {
    throw formatError(
      "bookingStatus",
      `Query parameter "bookingStatus" must be one of ${statuses.join(", ")}`,
    );
  }
  date(query, "dateFrom");
  date(query, "dateTo");
  boolean(query, "deltaList");
  boolean(query, "withBalance");
  int32(query, "pageIndex", 0, INT32_MAX);
  int32(query, "itemsPerPage", 1, INT32_MAX);
  const reference = query.get("entryReferenceFrom");
  const problem = reference === null ? undefined : idProblem(reference, 128);
  if (problem) {
    throw formatError("entryReferenceFrom", `Query parameter "entryReferenceFrom" ${problem}`);
  }
  const delta = reference !== null || query.get("deltaList")?.toLowerCase() === "true";
  if (query.get("dateFrom") === null && !delta && status !== "information") {
    throw formatError(
      "dateFrom",
      'Query parameter "dateFrom" is required unless delta access (entryReferenceFrom, deltaList) or bookingStatus "information" is used',
    );
  }
  const from = query.get("dateFrom");
  const to = query.get("dateTo");
  if (from !== null && to !== null && from > to) {
    throw new GatewayError(
      400,
      "PERIOD_INVALID",
      'Query parameter "dateFrom" must not be after "dateTo"',
      { path: "dateFrom" },
    );
  }
}

function installment(query: URLSearchParams): void {
  const amount = query.get("amount");
  if (amount === null) throw formatError("amount", 'Query parameter "amount" is required');
  if (!AMOUNT.test(amount) || amount.startsWith("-") || !/[1-9]/.test(amount)) {
    throw formatError(
      "amount",
      'Query parameter "amount" must be a positive decimal number, like 1500.00',
    );
  }
  const client = query.get("client_id");
  if (client === null) {
    throw formatError("client_id", 'Query parameter "client_id" is required');
  }
  const problem = idProblem(client, 128);
  if (problem) throw formatError("client_id", `Query parameter "client_id" ${problem}`);
}

/** The query of a URL without one. */
const NO_QUERY = new URLSearchParams();

export const queryParams = defineCheck({
  key: "query_params",
  description: "Query parameters: transaction list, product paging, installment calculator",
  options: modal({
    unknown_params: z.enum(["reject", "forward"]).default("reject").describe(
      "Query parameters the operation does not define: reject (400 PARAMETER_NOT_SUPPORTED) or let them through",
    ),
    max_page_size: z.number().int().min(1).max(INT32_MAX).default(100).describe(
      "Largest page-size of the product catalogue (the interface's default page-size is 10)",
    ),
  }),
  create(options, { operation }) {
    const known = new Set(knownParams(operation));
    const rules = operation.id === "getTransactionList"
      ? transactionList(BOOKING_STATUS)
      : operation.id === "getCardAccountTransactionList"
      ? transactionList(CARD_STATUS)
      : operation.id === "calculateInstallment"
      ? installment
      : operation.id === "getAccountList" || operation.id === "readAccountDetails"
      ? (query: URLSearchParams) => boolean(query, "withBalance")
      : known.has("page")
      ? (query: URLSearchParams) => {
        int32(query, "page", 0, INT32_MAX);
        int32(query, "page-size", 1, options.max_page_size);
      }
      : undefined;
    return (c, next) => {
      const url = c.req.url;
      const mark = url.indexOf("?");
      if (mark < 0) {
        rules?.(NO_QUERY);
        return next();
      }
      const query = new URLSearchParams(url.slice(mark + 1));
      const seen = new Set<string>();
      // forEach, not for-of: Deno's iterator costs several times as much.
      query.forEach((value, raw) => {
        const name = raw.length > 64 ? `${raw.slice(0, 64)}...` : raw;
        if (seen.has(raw)) {
          throw formatError(name, `Query parameter "${name}" must not be given more than once`);
        }
        seen.add(raw);
        if (hasControl(raw) || hasControl(value)) {
          throw formatError(name, `Query parameter "${name}" must not contain control characters`);
        }
        if (!known.has(raw) && options.unknown_params === "reject") {
          throw new GatewayError(
            400,
            "PARAMETER_NOT_SUPPORTED",
            known.size === 0
              ? `Query parameter "${name}" is not supported: this operation takes no query`
              : `Query parameter "${name}" is not supported; supported: ${[...known].join(", ")}`,
            { path: name },
          );
        }
      });
      rules?.(query);
      return next();
    };
  },
});
