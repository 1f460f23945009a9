/**
 * The query parameters each operation defines (000 and 001, plus the Berlin Group's paging of the
 * transaction list and its card account operations), with their formats: `query_params` accepts
 * these names, and the published contract describes them with these schemas.
 */
import type { Operation } from "../psd2/catalogue.ts";
import type { JsonSchema } from "./headers.ts";

/** Largest int32, the type of the paging parameters. */
export const INT32_MAX = 2_147_483_647;

/** Values of bookingStatus. */
export const BOOKING_STATUS = ["information", "booked", "pending", "both", "all"] as const;

/** Values of bookingStatus of a card account's transactions (1.3.11's `bookingStatusCard`). */
export const CARD_BOOKING_STATUS = ["booked", "pending", "both"] as const;

/** One query parameter. */
export interface QueryParameter {
  name: string;
  required: boolean;
  schema: JsonSchema;
}

const DATE = { type: "string", format: "date", examples: ["2025-01-01"] };
const BOOLEAN = { type: "boolean" };

function int(min: number, max: number): JsonSchema {
  return { type: "integer", minimum: min, maximum: max };
}

const optional = (name: string, schema: JsonSchema) => ({ name, required: false, schema });

/** A transaction report's query: its bookingStatus values, withBalance or not, and paging. */
function report(statuses: readonly string[], withBalance: boolean): QueryParameter[] {
  return [
    optional("dateFrom", DATE),
    optional("dateTo", DATE),
    optional("entryReferenceFrom", { type: "string", maxLength: 128 }),
    { name: "bookingStatus", required: true, schema: { type: "string", enum: [...statuses] } },
    optional("deltaList", BOOLEAN),
    ...(withBalance ? [optional("withBalance", BOOLEAN)] : []),
    optional("pageIndex", int(0, INT32_MAX)),
    optional("itemsPerPage", int(1, INT32_MAX)),
  ];
}

/** The query parameters of an operation; `maxPageSize` is the product catalogue's page-size cap. */
export function queryParameters(op: Operation, maxPageSize: number): QueryParameter[] {
  if (op.id === "getCardAccountTransactionList") {
    // 1.3.11 lists no paging for card reports; the account report's pageIndex and itemsPerPage are
    // taken too, so that a bank's paging links of a card report pass the gateway.
    return report(CARD_BOOKING_STATUS, false);
  }
  if (op.id === "getTransactionList") return report(BOOKING_STATUS, true);
  if (op.id === "getAccountList" || op.id === "readAccountDetails") {
    return [optional("withBalance", BOOLEAN)];
  }
  if (op.id === "calculateInstallment") {
    return [
      {
        name: "amount",
        required: true,
        schema: { type: "string", pattern: "^[0-9]{1,14}(\\.[0-9]{1,3})?$", examples: ["1500.00"] },
      },
      { name: "client_id", required: true, schema: { type: "string", maxLength: 128 } },
    ];
  }
  if (op.group === "products" && op.id !== "getProductById") {
    return [optional("page", int(0, INT32_MAX)), optional("page-size", int(1, maxPageSize))];
  }
  return [];
}
