/**
 * `bearer_token`: checks `Authorization: Bearer <JWT>` with jose against a JWKS (file or URL):
 * algorithm allow-list, issuer, audience, expiry with leeway, the scopes the operation's group
 * needs, and optionally that PSU-ID matches a claim. Required on the checkout order and the
 * installment calculator (the document says so). Errors carry `WWW-Authenticate` (RFC 6750).
 * When no certificate identified the TPP, the token's client id does.
 */
import { errors, type JWTPayload, jwtVerify } from "jose";
import { z } from "zod";
import { errorText } from "../src/lib/mask.ts";
import type { Group } from "../src/core/catalogue.ts";
import { defineCheck, modal } from "../src/core/check.ts";
import { requestHeaders } from "../src/core/request.ts";
import { type ErrorCode, GatewayError } from "../src/core/errors.ts";
import { JWS_ALGORITHMS } from "../src/signing/jws.ts";
import { keySet, readJwksFile } from "../src/tokens/jwks.ts";

/** What this check keeps per request, besides the TPP's identity. */
export interface BearerTokenVariables {
  /** The verified token's subject (`sub`), the PSU it was issued for, when it names one. */
  tokenSubject?: string;
}

declare module "../src/core/check.ts" {
  interface GatewayVariables extends BearerTokenVariables {}
}

/** Groups whose operations take a bearer token by the documents. */
const TOKEN_GROUPS: readonly Group[] = ["checkout", "installment"];
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

interface Challenge {
  error?: "invalid_request" | "invalid_token" | "insufficient_scope";
  scope?: string;
}

function quoted(text: string): string {
  return `"${text.replace(/["\\]/g, "'")}"`;
}

function rejection(
  realm: string,
  code: ErrorCode,
  text: string,
  challenge: Challenge = { error: "invalid_token" },
  path = "Authorization",
): GatewayError {
  let value = `Bearer realm=${quoted(realm)}`;
  if (challenge.error) {
    value += `, error=${quoted(challenge.error)}, error_description=${quoted(text)}`;
  }
  if (challenge.scope) value += `, scope=${quoted(challenge.scope)}`;
  return new GatewayError(401, code, text, { path, headers: { "www-authenticate": value } });
}

function scopesOf(value: unknown): string[] {
  if (typeof value === "string") return value.split(" ").filter(Boolean);
  if (Array.isArray(value)) return value.filter((s): s is string => typeof s === "string");
  return [];
}

/** jose's verdict as a Berlin Group error. */
function fromJose(error: unknown, realm: string): GatewayError {
  if (error instanceof errors.JWTExpired) {
    return rejection(realm, "TOKEN_EXPIRED", "The bearer token has expired");
  }
  if (error instanceof errors.JWTClaimValidationFailed) {
    return error.claim === "iss"
      ? rejection(
        realm,
        "TOKEN_UNKNOWN",
        "The bearer token was not issued by the bank's authorisation server",
      )
      : rejection(
        realm,
        "TOKEN_INVALID",
        `The bearer token's "${error.claim}" claim is not valid here: ${error.message}`,
      );
  }
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return rejection(realm, "TOKEN_UNKNOWN", "The bearer token's algorithm is not allowed");
  }
  if (
    error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys
  ) {
    return rejection(realm, "TOKEN_UNKNOWN", "The bearer token's signing key is not known");
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return rejection(realm, "TOKEN_UNKNOWN", "The bearer token's signature does not verify");
  }
  if (
    error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid ||
    error instanceof errors.JOSENotSupported
  ) {
    return rejection(realm, "TOKEN_UNKNOWN", "The bearer token is not a well-formed signed JWT");
  }
  // The key set could not be fetched or read: the bank's side, never the TPP's fault.
  return new GatewayError(
    503,
    "UPSTREAM_UNAVAILABLE",
    "The keys to check bearer tokens are unavailable",
    {
      headers: { "retry-after": "5" },
    },
  );
}

export const bearerToken = defineCheck({
  key: "bearer_token",
  description: "Verifies OAuth bearer tokens (JWT) against a JWKS: alg, iss, aud, exp, scopes",
  options: modal({
    required: z.boolean().optional().describe(
      "Reject requests without a bearer token; default true for the checkout and installment groups, false elsewhere (a token present is always checked)",
    ),
    jwks_url: z.url({ protocol: /^https?$/ }).optional().describe(
      "URL of the authorisation server's JWKS (one of jwks_url and jwks_file)",
    ),
    jwks_file: z.string().min(1).optional().describe("Path of a JWKS file, read at start-up"),
    algorithms: z.array(z.enum(JWS_ALGORITHMS)).min(1).default(["RS256", "PS256", "ES256"])
      .describe("Token signature algorithms accepted (none and HMAC never are)"),
    issuer: z.string().min(1).optional().describe("Required iss claim"),
    audience: z.array(z.string().min(1)).optional().describe(
      "Accepted aud values (one must match); unset: aud is not checked",
    ),
    leeway_seconds: z.number().int().min(0).max(600).default(30).describe(
      "Clock tolerance on exp, nbf and iat, in seconds",
    ),
    scopes: z.array(z.string().min(1)).default([]).describe(
      "Scopes the token must all grant (set per group, for example ais: [accounts])",
    ),
    scope_claim: z.string().min(1).default("scope").describe(
      "Claim holding the scopes: a space-separated string or a list",
    ),
    psu_id_claim: z.string().min(1).optional().describe(
      "When set, a PSU-ID header sent with a token must equal this claim (401 PSU_CREDENTIALS_INVALID otherwise)",
    ),
    client_id_claim: z.string().min(1).default("client_id").describe(
      "Claim naming the TPP, used as TPP id when no certificate identified it",
    ),
    refetch_interval_seconds: z.number().int().min(1).default(60).describe(
      "Least time between two JWKS fetches caused by an unknown kid",
    ),
    cache_seconds: z.number().int().min(1).default(600).describe(
      "Age after which the fetched JWKS is fetched again",
    ),
    fetch_timeout_ms: z.number().int().min(1).default(2000).describe("Deadline of one JWKS fetch"),
    realm: z.string().min(1).default("xs2a-edge").describe(
      "Realm of the WWW-Authenticate challenge",
    ),
  }, "off"),
  validate(options) {
    if (options.mode === "off") return [];
    if (!options.jwks_url === !options.jwks_file) return ["give one of jwks_url and jwks_file"];
    if (options.jwks_file) {
      const jwks = readJwksFile(options.jwks_file);
      if (jwks instanceof Error) return [`jwks_file: ${jwks.message}`];
    }
    return [];
  },
  create(options, { operation, services }) {
    const required = options.required ?? TOKEN_GROUPS.includes(operation.group);
    const keys = keySet({
      url: options.jwks_url,
      file: options.jwks_file,
      cooldownMs: options.refetch_interval_seconds * 1000,
      maxAgeMs: options.cache_seconds * 1000,
      timeoutMs: options.fetch_timeout_ms,
    }, services);
    const realm = options.realm;
    const verify = {
      algorithms: options.algorithms,
      issuer: options.issuer,
      audience: options.audience,
      clockTolerance: options.leeway_seconds,
    };
    const scopeText = options.scopes.join(" ");
    return async (c, next) => {
      const authorization = requestHeaders(c).get("authorization");
      const match = authorization ? BEARER.exec(authorization.trim()) : null;
      if (!match) {
        // A Bearer credential that is sent is always checked; another scheme only fails where
        // a token is required.
        if (authorization && /^bearer\b/i.test(authorization.trim())) {
          throw rejection(
            realm,
            "TOKEN_UNKNOWN",
            'Header "Authorization" must look like Bearer <JWT>',
            {
              error: "invalid_request",
            },
          );
        }
        if (!required) return next();
        throw rejection(
          realm,
          "TOKEN_UNKNOWN",
          'Header "Authorization" must carry a bearer token',
          {},
        );
      }
      let claims: JWTPayload;
      try {
        ({ payload: claims } = await jwtVerify(match[1], keys, {
          ...verify,
          currentDate: new Date(services.now()),
        }));
      } catch (error) {
        const rejected = fromJose(error, realm);
        if (rejected.status === 503) {
          services.log.error({
            msg: "jwks unavailable",
            op: operation.id,
            error: errorText(error),
          });
        }
        throw rejected;
      }
      const granted = scopesOf(claims[options.scope_claim]);
      const lacking = options.scopes.filter((s) => !granted.includes(s));
      if (lacking.length > 0) {
        throw rejection(
          realm,
          "TOKEN_INVALID",
          `The bearer token lacks the scope ${lacking.join(", ")} this operation needs`,
          { error: "insufficient_scope", scope: scopeText },
        );
      }
      const psuId = requestHeaders(c).get("psu-id");
      if (options.psu_id_claim && psuId !== null && claims[options.psu_id_claim] !== psuId) {
        throw rejection(
          realm,
          "PSU_CREDENTIALS_INVALID",
          `Header "PSU-ID" must match the bearer token's "${options.psu_id_claim}" claim`,
          { error: "invalid_token" },
          "PSU-ID",
        );
      }
      if (typeof claims.sub === "string" && claims.sub !== "") c.set("tokenSubject", claims.sub);
      const clientId = claims[options.client_id_claim];
      if (!c.get("tpp") && typeof clientId === "string" && clientId !== "") {
        c.set("tpp", { id: clientId, roles: [], domains: [] });
      }
      return next();
    };
  },
});
