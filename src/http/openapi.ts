/**
 * The published contract: an OpenAPI 3.1 document of the interface as this gateway's policy serves
 * it (`GET /openapi.json`, `deno task openapi`). It is derived, never written by hand: the routes
 * and their parameters from the catalogue as the policy resolved it (only the payment products
 * the policy offers), the request bodies from the same zod schemas `body_schema` validates with
 * (`z.toJSONSchema`, with each operation's options), the headers and query parameters from the
 * formats the checks test with, the error bodies with the codes of each status, and the security
 * schemes the policy enforces (mTLS transport certificate, bearer token, request signatures).
 */
import { z } from "zod";
import { PAYMENT_PRODUCTS, templateParams } from "../psd2/catalogue.ts";
import { CODES, type ErrorStatus } from "../psd2/errors.ts";
import type { Policy, ResolvedOperation } from "../policy/load.ts";
import { displayName, headerSchema, type JsonSchema } from "../bodies/headers.ts";
import { queryParameters } from "../bodies/query.ts";
import { type BodyOptions, textCharset } from "../bodies/text.ts";
import { bulkPayment, periodicPayment, singlePayment, standingOrder } from "../bodies/payment.ts";
import { consent } from "../bodies/consent.ts";
import { authorisation } from "../bodies/authorisation.ts";
import { checkoutOrder } from "../bodies/checkout_order.ts";
import { fundsConfirmation } from "../bodies/funds_confirmation.ts";
import { signingBasket } from "../bodies/signing_basket.ts";
import { LOCALE_SPELLINGS } from "../bodies/locale.ts";
import { PERIODIC_PARTS } from "../bodies/periodic_form.ts";
import { SAFE_ID } from "../lib/ids.ts";
import { answerSchemas, errorSchema, REQUEST_ID_HEADER, successBody } from "./openapi_responses.ts";
import {
  authorisationExamples,
  checkoutOrderExample,
  consentExample,
  fundsConfirmationExample,
  PAIN_001_EXAMPLE,
  paymentExamples,
  signingBasketExample,
  standingOrderExample,
} from "./openapi_examples.ts";

type Options = Record<string, Record<string, unknown>>;

/** Headers the document does not list as parameters: OpenAPI describes them otherwise. */
const NOT_PARAMETERS = new Set([
  "content-type", // the request body's media types
  "authorization", // the bearer security scheme
  "accept", // the responses' media types
  "x-jws-signature", // the jwsSignature security scheme
  "signature", // the httpSignature security scheme
]);

/** The check that enforces a header's presence where the catalogue requires it. */
const PRESENCE: Record<string, string> = {
  "x-request-id": "request_id",
  "psu-ip-address": "psu_ip_address",
  "consent-id": "consent_id",
};

/** The statuses the gateway (or the bank behind it) may answer an operation with an error. */
const ERROR_STATUSES: ErrorStatus[] = [
  400,
  401,
  403,
  404,
  405,
  406,
  408,
  409,
  413,
  415,
  429,
  500,
  503,
];

/** The answer headers of the catalogue (`Operation.answers`) a success answer declares. */
const ANSWER_HEADERS: Record<string, string> = {
  location: "Location",
  "aspsp-sca-approach": "ASPSP-SCA-Approach",
  "aspsp-notification-support": "ASPSP-Notification-Support",
  "aspsp-notification-content": "ASPSP-Notification-Content",
};

/** Groups whose operations require a bearer token unless the policy says (`bearer_token`). */
const TOKEN_GROUPS = ["checkout", "installment"];

const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });

function on(options: Options, key: string): boolean {
  return options[key] !== undefined && options[key].mode !== "off";
}

function enforced(options: Options, key: string): boolean {
  return options[key] !== undefined && (options[key].mode ?? "enforce") === "enforce";
}

/** Whether `authorization` requires a token where `bearer_token` does not verify one. */
function tokenPresence(options: Options, op: ResolvedOperation["operation"]): boolean {
  return !on(options, "bearer_token") && enforced(options, "authorization") &&
    op.required.includes("authorization");
}

/** A zod schema as a JSON Schema to embed (without its `$schema`). */
function jsonSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, {
    io: "input",
    unrepresentable: "any",
  }) as JsonSchema;
  return rest;
}

/** Builds the document; `today` (`YYYY-MM-DD`) dates the examples and the "not past" rules. */
export function openApiDocument(policy: Policy, today: string): JsonSchema {
  const schemas: Record<string, JsonSchema> = answerSchemas();
  const named = new Map<string, string>();
  /** A body component, shared by operations whose options build the same schema. */
  function component(name: string, options: unknown, build: () => z.ZodType): JsonSchema {
    const key = `${name} ${JSON.stringify(options)}`;
    let chosen = named.get(key);
    if (!chosen) {
      chosen = schemas[name] === undefined ? name : `${name}${named.size}`;
      named.set(key, chosen);
      schemas[chosen] = jsonSchema(build());
    }
    return ref("schemas", chosen);
  }
  const todayFn = () => today;

  function requestBody(r: ResolvedOperation, offered: readonly string[]): JsonSchema | undefined {
    const op = r.operation;
    if (op.body === "none") return undefined;
    const o = r.options.body_schema ?? {};
    const built: BodyOptions = {
      unknown: (o.unknown_fields as BodyOptions["unknown"]) ?? "reject",
      charset: textCharset(o.interface_charset as Parameters<typeof textCharset>[0]),
      maxBulk: (o.max_bulk_payments as number) ?? 1000,
      allowHttp: (o.allow_http_urls as boolean) ?? false,
    };
    const json = (schema: JsonSchema, examples: Record<string, unknown>) => ({
      "application/json": {
        schema,
        examples: Object.fromEntries(
          Object.entries(examples).map(([name, value]) => [name, { value }]),
        ),
      },
    });
    if (op.body === "payment") {
      const examples = paymentExamples(today);
      const content: JsonSchema = json({
        anyOf: [
          component("SinglePayment", built, () => singlePayment(built, todayFn)),
          component("BulkPayment", built, () => bulkPayment(built, todayFn)),
          component("PeriodicPayment", built, () => periodicPayment(built, todayFn)),
        ],
      }, examples);
      if (offered.some((product) => product.startsWith("pain.001-"))) {
        content["application/xml"] = {
          schema: { type: "string", description: "A pain.001 document (pain.001-* products)" },
          examples: { "pain.001": { value: PAIN_001_EXAMPLE } },
        };
        content["multipart/form-data"] = {
          schema: {
            type: "object",
            description: "A periodic payment of a pain.001-* product (periodic-payments only)",
            required: Object.keys(PERIODIC_PARTS),
            properties: {
              xml_sct: { type: "string", description: "The pain.001 document" },
              json_standingorderType: component(
                "StandingOrder",
                built,
                () => standingOrder(built, todayFn),
              ),
            },
          },
          encoding: Object.fromEntries(
            Object.entries(PERIODIC_PARTS).map(([part, types]) => [
              part,
              { contentType: types.join(", ") },
            ]),
          ),
          examples: {
            "periodic-payments": {
              value: {
                xml_sct: PAIN_001_EXAMPLE,
                json_standingorderType: standingOrderExample(today),
              },
            },
          },
        };
      }
      return {
        required: true,
        description:
          "By payment-service: payments, bulk-payments or periodic-payments (JSON products); a pain.001 document for pain.001-* products, or a multipart form for a periodic one. Example names are the payment-service they fit.",
        content,
      };
    }
    if (op.body === "consent") {
      return {
        required: true,
        content: json(component("Consent", built, () => consent(built, todayFn)), {
          consent: consentExample(today),
        }),
      };
    }
    if (op.body === "checkoutOrder") {
      return {
        required: true,
        content: json(component("CheckoutOrder", built, () => checkoutOrder(built)), {
          order: checkoutOrderExample(),
        }),
      };
    }
    if (op.body === "fundsConfirmation") {
      return {
        required: true,
        content: json(
          component("ConfirmationOfFunds", built, () => fundsConfirmation(built)),
          { fundsConfirmation: fundsConfirmationExample() },
        ),
      };
    }
    if (op.body === "signingBasket") {
      return {
        required: true,
        content: json(component("SigningBasket", built, () => signingBasket(built)), {
          signingBasket: signingBasketExample(),
        }),
      };
    }
    const update = op.body === "authorisationUpdate";
    return {
      required: false,
      description: "No body, null or {} updates the PSU identification",
      content: json(
        component(
          update ? "AuthorisationUpdate" : "Authorisation",
          built,
          () => authorisation(built, update),
        ),
        authorisationExamples(update),
      ),
    };
  }

  function parameters(r: ResolvedOperation, offered: readonly string[]): JsonSchema[] {
    const op = r.operation;
    const o = r.options;
    const list: JsonSchema[] = [];
    for (const name of templateParams(op.path)) {
      const values = name === "payment-product"
        ? offered
        : name === "locale"
        ? pathLocales(op.params[name]?.values ?? [])
        : op.params[name]?.values;
      list.push({
        name,
        in: "path",
        required: true,
        ...(name === "locale" ? { description: LOCALE_DESCRIPTION } : {}),
        schema: values ? { type: "string", enum: [...values] } : {
          type: "string",
          maxLength: (o.path_params?.max_id_length as number) ?? 128,
          pattern: SAFE_ID.source,
        },
      });
    }
    const maxPageSize = (o.query_params?.max_page_size as number) ?? 100;
    for (const query of queryParameters(op, maxPageSize)) {
      list.push({ name: query.name, in: "query", required: query.required, schema: query.schema });
    }
    const caps = Object.fromEntries(
      Object.entries((o.header_limits?.caps as Record<string, number>) ?? {}).map((
        [name, cap],
      ) => [name.toLowerCase(), cap]),
    );
    const formats = {
      caps,
      maxHeaderBytes: (o.header_limits?.max_header_bytes as number) ?? 16_384,
      consentIdLength: (o.consent_id?.max_length as number) ?? 128,
      ipv6: (o.psu_ip_address?.allow_ipv6 as boolean) ?? true,
      longitudeSixDecimals: (o.psu_geo_location?.longitude_six_decimals as boolean) ?? false,
      allowHttp: (o.tpp_redirect_uri?.allow_http as boolean) ?? false,
    };
    if (op.body === "none" && op.required.includes("content-type") && enforced(o, "content_type")) {
      // OpenAPI describes a body's media type, and this operation has no body; the interface
      // requires the header anyway, so it is a parameter here (a generated client sends it).
      const types = (o.content_type.json_types as string[] | undefined) ?? ["application/json"];
      list.push({
        name: "Content-Type",
        in: "header",
        required: true,
        description: "Required by the interface although the request has no body",
        schema: { type: "string", enum: types },
      });
    }
    for (const name of op.headers) {
      if (NOT_PARAMETERS.has(name)) continue;
      const presence = PRESENCE[name];
      const required = (op.required.includes(name) &&
        (presence === undefined || enforced(o, presence))) ||
        (name === "digest" && enforced(o, "digest") && o.digest.required === true) ||
        (name === "tpp-redirect-uri" && enforced(o, "tpp_redirect_uri") &&
          o.tpp_redirect_uri.redirect_only === true);
      list.push({
        name: displayName(name),
        in: "header",
        required,
        schema: headerSchema(name, formats),
      });
    }
    return list;
  }

  function security(o: Options, op: ResolvedOperation["operation"]): JsonSchema[] | undefined {
    const group = op.group;
    const schemes: [string, boolean][] = [];
    if (on(o, "tpp_certificate")) {
      schemes.push([
        "mutualTLS",
        enforced(o, "tpp_certificate") && o.tpp_certificate.required === true,
      ]);
    }
    if (on(o, "bearer_token")) {
      const required = (o.bearer_token.required as boolean | undefined) ??
        TOKEN_GROUPS.includes(group);
      schemes.push(["bearerAuth", enforced(o, "bearer_token") && required]);
    } else if (tokenPresence(o, op)) {
      // Tokens are not verified, but `authorization` still refuses a call without one.
      schemes.push(["bearerAuth", true]);
    }
    for (
      const [key, name] of [["jws_signature", "jwsSignature"], ["http_signature", "httpSignature"]]
    ) {
      if (on(o, key)) schemes.push([name, enforced(o, key) && o[key].required === true]);
    }
    if (schemes.length === 0) return undefined;
    const base = Object.fromEntries(
      schemes.filter(([, required]) => required).map(([n]) => [n, []]),
    );
    const optional = schemes.filter(([, required]) => !required).map(([name]) => name);
    return [base, ...optional.map((name) => ({ ...base, [name]: [] }))];
  }

  function responses(r: ResolvedOperation, offered: readonly string[]): JsonSchema {
    const op = r.operation;
    const out: JsonSchema = {};
    for (const status of op.success) {
      const headers: JsonSchema = { "X-Request-ID": ref("headers", "X-Request-ID") };
      for (const name of op.answers) {
        const shown = ANSWER_HEADERS[name];
        if (shown && (name !== "location" || status === 201)) {
          headers[shown] = ref("headers", shown);
        }
      }
      const body = successBody(op, status);
      const content: JsonSchema | undefined = body && { "application/json": { schema: body } };
      if (
        content && op.id === "getPaymentInformation" && offered.some((p) => p.startsWith("pain."))
      ) {
        content["application/xml"] = { schema: { type: "string" } };
      }
      out[String(status)] = {
        description: status === 204 ? "Done, no body" : "Success",
        headers,
        ...(content ? { content } : {}),
      };
    }
    for (const status of ERROR_STATUSES) out[String(status)] = ref("responses", `Error${status}`);
    return out;
  }

  const paths: Record<string, JsonSchema> = {};
  const securitySchemes: Record<string, JsonSchema> = {};
  for (const r of policy.operations) {
    const op = r.operation;
    const o = r.options;
    const offered: readonly string[] = on(o, "path_params")
      ? (o.path_params.offered_products as string[])
      : PAYMENT_PRODUCTS;
    const entry: JsonSchema = {
      operationId: op.id,
      tags: [op.group],
      ...(op.deprecated ? { deprecated: true } : {}),
      parameters: parameters(r, offered),
    };
    const body = requestBody(r, offered);
    if (body) entry.requestBody = body;
    entry.responses = responses(r, offered);
    const required = security(o, op);
    if (required) entry.security = required;
    (paths[op.path] ??= {})[op.method.toLowerCase()] = entry;
    addSchemes(o, securitySchemes, tokenPresence(o, op));
  }

  const errorResponses = Object.fromEntries(ERROR_STATUSES.map((status) => [
    `Error${status}`,
    {
      description: `Berlin Group error (${CODES[status].slice(0, 4).join(", ")}${
        CODES[status].length > 4 ? ", ..." : ""
      })`,
      headers: {
        "X-Request-ID": ref("headers", "X-Request-ID"),
        ...(status === 429 || status === 503
          ? { "Retry-After": ref("headers", "Retry-After") }
          : {}),
      },
      content: { "application/json": { schema: ref("schemas", `Error${status}`) } },
    },
  ]));
  for (const status of ERROR_STATUSES) schemas[`Error${status}`] = errorSchema(status);

  return {
    openapi: "3.1.0",
    info: {
      title: "xs2a-edge",
      version: "1.3.9",
      description:
        "The payment initiation, account information and consent interface (Berlin Group NextGenPSD2 1.3.9, interface 0.8) and the merchant checkout, installment calculator and product catalogue interface, as this gateway's policy serves them. Derived from the policy file and the gateway's own validation rules.",
    },
    servers: [{ url: "/" }],
    paths,
    components: {
      schemas,
      responses: errorResponses,
      headers: {
        "X-Request-ID": REQUEST_ID_HEADER,
        Location: { description: "The created resource", schema: { type: "string" } },
        "ASPSP-SCA-Approach": {
          description: "The SCA approach the bank chose",
          schema: { type: "string", enum: ["EMBEDDED", "DECOUPLED", "REDIRECT", "OAUTH"] },
        },
        "ASPSP-Notification-Support": {
          description:
            "Whether the bank sends the notifications asked for with TPP-Notification-URI (false when the gateway dropped the URI)",
          schema: { type: "boolean" },
        },
        "ASPSP-Notification-Content": {
          description: "What the notifications carry: status=SCA, PROCESS or LAST",
          schema: { type: "string" },
        },
        "Retry-After": {
          description: "Seconds to wait",
          schema: { type: "string", pattern: "^[0-9]+$" },
        },
      },
      securitySchemes,
    },
  };
}

/** The security schemes of the checks that run for an operation. */
function addSchemes(o: Options, schemes: Record<string, JsonSchema>, token: boolean): void {
  if (on(o, "tpp_certificate")) {
    schemes.mutualTLS = {
      type: "mutualTLS",
      description:
        "The TPP's eIDAS website certificate (QWAC) with its PSD2 roles, presented in the TLS handshake (the bank's TLS terminator passes it to the gateway)",
    };
  }
  if (on(o, "bearer_token")) {
    schemes.bearerAuth = { type: "http", scheme: "bearer", bearerFormat: "JWT" };
  } else if (token) {
    schemes.bearerAuth = {
      type: "http",
      scheme: "bearer",
      description: "The merchant's token; the gateway requires it and the bank verifies it",
    };
  }
  if (on(o, "jws_signature")) {
    schemes.jwsSignature = {
      type: "apiKey",
      in: "header",
      name: "x-jws-signature",
      description:
        "Detached JWS (JAdES HttpHeaders) whose sigD.pars cover digest and x-request-id, and psu-id, psu-corporate-id and tpp-redirect-uri when sent (a bank's policy may ask for more, such as (request-target)); with a Digest header of the body",
    };
  }
  if (on(o, "http_signature")) {
    schemes.httpSignature = {
      type: "apiKey",
      in: "header",
      name: "Signature",
      description:
        "Berlin Group HTTP Signature (draft-cavage) with TPP-Signature-Certificate and a Digest header of the body",
    };
  }
}

const LOCALE_DESCRIPTION =
  "ge or en, as the catalogue spells them; ka and en-US, the checkout's spellings, are taken too and reach the core as ge and en";

/** The catalogue's locales, then the checkout's spellings of them, which the gateway also takes. */
function pathLocales(catalogue: readonly string[]): string[] {
  return [...catalogue, ...LOCALE_SPELLINGS.filter((l) => !catalogue.includes(l))];
}
