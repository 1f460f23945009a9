/**
 * `body_schema`: the request body fits the operation. The schema is chosen by the catalogue's
 * body kind (and, for payments, by payment-service and payment-product): single, bulk or periodic
 * payment, pain.001 XML (well-formed, without XInclude or schema locations), a periodic pain.001 as
 * multipart/form-data (the XML part and the JSON schedule part), consent, authorisation (POST, PUT)
 * checkout order, confirmation of funds or signing basket. Operations without a body refuse one. Every JSON body is also scanned for
 * duplicate keys, deep nesting and control characters. Unknown fields are rejected or let through,
 * as the policy says.
 */
import { z } from "zod";
import { defineCheck, type GatewayContext, modal } from "../src/core/check.ts";
import { type HeaderLookup } from "../src/lib/header_pairs.ts";
import { bodyText, jsonBody, requestHeaders } from "../src/core/request.ts";
import { formatError, GatewayError } from "../src/psd2/errors.ts";
import { earliestToday } from "../src/lib/dates.ts";
import { parseBody } from "../src/bodies/issues.ts";
import { jsonProblem } from "../src/bodies/json_scan.ts";
import { xmlProblem } from "../src/bodies/xml.ts";
import { type BodyOptions, textCharset } from "../src/bodies/text.ts";
import {
  bulkPayment,
  periodicPayment,
  singlePayment,
  standingOrder,
  type Today,
} from "../src/bodies/payment.ts";
import { checkPeriodicForm, FORM_DATA, formBoundary } from "../src/bodies/periodic_form.ts";
import { parseMediaType } from "../src/lib/media_type.ts";
import { consent } from "../src/bodies/consent.ts";
import { authorisation } from "../src/bodies/authorisation.ts";
import { fundsConfirmation } from "../src/bodies/funds_confirmation.ts";
import { signingBasket } from "../src/bodies/signing_basket.ts";
import {
  type CheckoutOrder,
  checkoutOrder,
  orderForCore,
  totalsDiffer,
} from "../src/bodies/checkout_order.ts";

/** The body as UTF-8 text (decoded once per request); 400 when it is not UTF-8. */
function utf8Body(c: GatewayContext): string {
  const text = bodyText(c);
  if (text === undefined) throw formatError("body", "The request body must be UTF-8 text");
  return text;
}

/**
 * A valid checkout order: its purchase units add up to its items (400 PARAMETER_NOT_CONSISTENT
 * otherwise), and the core gets it in the document's forms (locale spelling, amount types), the
 * rest as sent.
 */
function settleOrder(c: GatewayContext, order: CheckoutOrder): void {
  const differ = totalsDiffer(order);
  if (differ) {
    throw new GatewayError(
      400,
      "PARAMETER_NOT_CONSISTENT",
      `The purchase units add up to "${differ.units}", the items (amount × quantity) to "${differ.items}"`,
      { path: "purchase_units" },
    );
  }
  const forCore = orderForCore(order);
  if (!forCore) return;
  const text = JSON.stringify(forCore);
  c.set("body", new TextEncoder().encode(text));
  c.set("bodyText", text);
  c.set("json", forCore);
}

/**
 * Whether the request's framing announces a body. Deno's server gives a GET request no body
 * even when one was sent, so the bytes alone would let a GET body pass unseen.
 */
function framesBody(headers: HeaderLookup): boolean {
  return Number(headers.get("content-length")) > 0 || headers.has("transfer-encoding");
}

export const bodySchema = defineCheck({
  key: "body_schema",
  description:
    "The request body must fit the operation's schema (zod), or be well-formed pain.001 XML",
  options: modal({
    unknown_fields: z.enum(["reject", "forward"]).default("reject").describe(
      "Fields the interface does not define: reject (400) or let them through to the bank",
    ),
    interface_charset: z.union([z.boolean(), z.enum(["interface", "latin", "unicode"])])
      .default(true).describe(
        "The characters of free text (names, remittance information, addresses): true or interface: the interface character set a-z A-Z 0-9 / - ? : ( ) . , ' + space; latin: that set with & # @ and accented Latin letters; unicode: printable text in any script (no control, format or private-use characters); false: no rule of characters",
      ),
    max_frequency_per_day: z.number().int().min(1).default(4).describe(
      "Highest frequencyPerDay a consent may ask for (the interface: 4 unless agreed bilaterally)",
    ),
    bilateral_frequency_per_day: z.record(z.string().min(1), z.number().int().min(1)).default({})
      .describe(
        "Higher frequencyPerDay maxima agreed bilaterally, by TPP id (organizationIdentifier, for example PSDGE-NBG-123456)",
      ),
    max_bulk_payments: z.number().int().min(1).default(1000).describe(
      "Most payments a bulk payment may carry",
    ),
    max_json_depth: z.number().int().min(2).max(256).default(16).describe(
      "Deepest nesting of objects and arrays accepted in a JSON body",
    ),
    max_xml_depth: z.number().int().min(2).max(1024).default(64).describe(
      "Deepest nesting of elements accepted in a pain.001 XML body",
    ),
    allow_xml_schema_location: z.boolean().default(false).describe(
      "Accept xsi:schemaLocation and xsi:noNamespaceSchemaLocation in pain.001 XML bodies (some payment software writes them); refused by default, since a validator behind the gateway may fetch the schema they name. XInclude is always refused",
    ),
    allow_http_urls: z.boolean().default(false).describe(
      "Accept http URLs where https ones are expected (checkout redirect_url); for a sandbox only",
    ),
  }),
  create(options, { operation, services }) {
    const kind = operation.body;
    const today: Today = () => earliestToday(services.now());
    const built: BodyOptions = {
      unknown: options.unknown_fields,
      charset: textCharset(options.interface_charset),
      maxBulk: options.max_bulk_payments,
      allowHttp: options.allow_http_urls,
    };

    if (kind === "none") {
      return (c, next) => {
        if (c.get("body").byteLength > 0 || framesBody(requestHeaders(c))) {
          throw formatError("body", "This operation takes no request body");
        }
        return next();
      };
    }

    // The zod schemas are built on the first request that needs each, not at start-up: building
    // them for every operation took about half the app's assembly (15-20 ms CPU). Each is compiled
    // (`z.compile`: zod's generated validator, which checks a valid body at about half the cost of
    // its runtime parser and without building a copy of it; the runtime still finds an invalid
    // body's issue).
    const builders = new Map<string, () => z.ZodType>(
      kind === "payment"
        ? [
          ["payments", () => singlePayment(built, today)],
          ["bulk-payments", () => bulkPayment(built, today)],
          ["periodic-payments", () => periodicPayment(built, today)],
        ]
        : kind === "consent"
        ? [["consent", () => consent(built, today)]]
        : kind === "checkoutOrder"
        ? [["checkoutOrder", () => checkoutOrder(built)]]
        : kind === "fundsConfirmation"
        ? [["fundsConfirmation", () => fundsConfirmation(built)]]
        : kind === "signingBasket"
        ? [["signingBasket", () => signingBasket(built)]]
        : [["authorisation", () => authorisation(built, kind === "authorisationUpdate")]],
    );
    const compiled = new Map<string, z.ZodType>();
    const [first] = builders.keys();
    /** The schema of a payment-service (a single payment's for another), of the kind otherwise. */
    const schemaFor = (service: string | undefined): z.ZodType => {
      const name = service !== undefined && builders.has(service) ? service : first;
      let schema = compiled.get(name);
      if (!schema) compiled.set(name, schema = z.compile(builders.get(name)!()));
      return schema;
    };
    const emptyAllowed = kind === "authorisation" || kind === "authorisationUpdate";
    const bilateral = new Map(Object.entries(options.bilateral_frequency_per_day));
    let schedule: z.ZodType | undefined;
    const form = {
      get schedule() {
        return schedule ??= z.compile(standingOrder(built, today));
      },
      maxJsonDepth: options.max_json_depth,
      maxXmlDepth: options.max_xml_depth,
      allowSchemaLocation: options.allow_xml_schema_location,
      unknown: options.unknown_fields,
    };

    return (c, next) => {
      const params = c.get("params");
      if (kind === "payment" && (params["payment-product"] ?? "").startsWith("pain.001-")) {
        if (c.get("body").byteLength === 0) {
          throw formatError("body", "The request body is required");
        }
        const type = requestHeaders(c).get("content-type");
        if (parseMediaType(type ?? "")?.essence === FORM_DATA) {
          if (params["payment-service"] !== "periodic-payments") {
            throw formatError(
              "Content-Type",
              "Only a periodic payment is sent as multipart/form-data (parts xml_sct and json_standingorderType)",
            );
          }
          checkPeriodicForm(utf8Body(c), formBoundary(type), form);
          return next();
        }
        const problem = xmlProblem(utf8Body(c), options.max_xml_depth, {
          allowSchemaLocation: options.allow_xml_schema_location,
        });
        if (problem) throw formatError("body", problem);
        return next();
      }
      if (c.get("body").byteLength === 0) {
        if (emptyAllowed) return next();
        throw formatError("body", "The request body is required (a JSON object)");
      }
      const value = jsonBody(c);
      const scan = jsonProblem(utf8Body(c), options.max_json_depth);
      if (scan) {
        throw formatError(
          scan.path,
          scan.path === "body"
            ? `The request body ${scan.problem}`
            : `Field "${scan.path}" ${scan.problem}`,
        );
      }
      const parsed = parseBody(
        schemaFor(kind === "payment" ? params["payment-service"] : undefined),
        value,
      );
      if (kind === "checkoutOrder") settleOrder(c, parsed as CheckoutOrder);
      if (kind === "consent") {
        const { frequencyPerDay } = parsed as { frequencyPerDay: number };
        const tpp = c.get("tpp")?.id;
        const max = (tpp && bilateral.get(tpp)) || options.max_frequency_per_day;
        if (frequencyPerDay > max) {
          throw formatError(
            "frequencyPerDay",
            `Field "frequencyPerDay" must be at most ${max}${
              tpp && bilateral.has(tpp) ? " (the bilateral agreement's maximum)" : ""
            }`,
          );
        }
      }
      return next();
    };
  },
});
