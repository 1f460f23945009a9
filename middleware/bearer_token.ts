/**
 * `bearer_token`: checks `Authorization: Bearer <JWT>` with jose against a JWKS (file or URL):
 * algorithm allow-list, issuer, audience, expiry with leeway, the scopes the operation's group
 * needs, and optionally that PSU-ID matches a claim. Opaque tokens are asked of the authorisation
 * server's introspection endpoint (RFC 7662, src/tokens/introspection.ts) and their answer goes
 * through the same checks; the policy chooses per group (`verification`). Required on the checkout order and the
 * installment calculator (the document says so). Errors carry `WWW-Authenticate` (RFC 6750).
 * When no certificate identified the TPP, the token's client id does. A token bound to a
 * certificate (RFC 8705 `cnf.x5t#S256`) is good only with that transport certificate, and the
 * policy can require a claim to name the certificate's TPP (`certificate_claim`).
 */
import type { JWTPayload } from "jose";
import * as errors from "jose/errors";
import { z } from "zod";
import { errorText } from "../src/lib/mask.ts";
import type { Group } from "../src/psd2/catalogue.ts";
import { defineCheck, modal } from "../src/core/check.ts";
import { requestHeaders } from "../src/core/request.ts";
import { type CodeFor, GatewayError } from "../src/psd2/errors.ts";
import { JWS_ALGORITHMS } from "../src/signing/jws.ts";
import { keySet, readJwksFile } from "../src/tokens/jwks.ts";
import { tokenVerifier } from "../src/tokens/verified.ts";
import {
  InactiveToken,
  introspectionOptions,
  introspectionProblems,
  introspector,
  looksLikeJwt,
} from "../src/tokens/introspection.ts";
import { duration, httpUrl, TIMER_MAX } from "../src/lib/fields.ts";
import { RETRY_AFTER_SECONDS } from "../src/psd2/retry_after.ts";
import type { CertificateInfo } from "../src/pki/certificate.ts";

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
  code: CodeFor<401>,
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
    if (error.claim === "iss") {
      return rejection(
        realm,
        "TOKEN_UNKNOWN",
        "The bearer token was not issued by the bank's authorisation server",
      );
    }
    return error.reason === "missing"
      ? rejection(realm, "TOKEN_INVALID", `The bearer token must carry the "${error.claim}" claim`)
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
      headers: { "retry-after": String(RETRY_AFTER_SECONDS.keysUnavailable) },
    },
  );
}

/**
 * The token's binding to the transport certificate: RFC 8705 `cnf.x5t#S256`, when the token
 * carries it, must be the certificate's SHA-256 thumbprint; `claim`, when the policy names one,
 * must be the certificate's organizationIdentifier. A token of one TPP presented with another
 * TPP's certificate is 401 TOKEN_INVALID. With `required` (the policy's `require_binding`), a
 * token that binds itself by neither to the request's certificate is refused too.
 */
function bindToCertificate(
  certificate: CertificateInfo | undefined,
  claims: JWTPayload,
  binding: { claim: string | undefined; required: boolean },
  realm: string,
): void {
  const { claim, required } = binding;
  const cnf = claims.cnf;
  if (required && cnf === undefined && !(claim && certificate)) {
    throw rejection(
      realm,
      "TOKEN_INVALID",
      certificate
        ? claim
          ? `The bearer token must be bound to the transport certificate ("cnf.x5t#S256" or the "${claim}" claim)`
          : 'The bearer token must be bound to the transport certificate ("cnf.x5t#S256")'
        : "The bearer token must be bound to a transport certificate, and the request carries none",
    );
  }
  if (cnf !== undefined) {
    // A confirmation the gateway cannot check (a DPoP key, jkt) would bind nothing here.
    const methods = cnf && typeof cnf === "object" ? Object.keys(cnf) : [String(cnf)];
    const unknown = methods.find((method) => method !== "x5t#S256");
    if (unknown !== undefined) {
      throw rejection(
        realm,
        "TOKEN_INVALID",
        `The bearer token's confirmation "cnf.${unknown}" cannot be checked here; only "cnf.x5t#S256"`,
      );
    }
    const thumbprint = (cnf as Record<string, unknown>)["x5t#S256"];
    if (thumbprint !== certificate?.x5tS256) {
      throw rejection(
        realm,
        "TOKEN_INVALID",
        certificate
          ? 'The bearer token is bound to another certificate than the transport certificate ("cnf.x5t#S256")'
          : 'The bearer token is bound to a certificate ("cnf.x5t#S256"), and the request carries none',
      );
    }
  }
  if (claim && certificate && claims[claim] !== certificate.organizationId) {
    throw rejection(
      realm,
      "TOKEN_INVALID",
      `The bearer token's "${claim}" claim must be the transport certificate's TPP "${certificate.organizationId}"`,
    );
  }
}

/**
 * The claims of an active introspected token, checked as jose checks a JWT's: exp and nbf with
 * leeway (when present: the server said the token is active), iss and aud when the policy names
 * them.
 */
function checkIntrospected(
  claims: JWTPayload,
  verify: { issuer?: string; audience?: string[]; clockTolerance: number },
  now: number,
  realm: string,
): void {
  const seconds = now / 1000;
  if (typeof claims.exp === "number" && claims.exp + verify.clockTolerance <= seconds) {
    throw rejection(realm, "TOKEN_EXPIRED", "The bearer token has expired");
  }
  if (typeof claims.nbf === "number" && claims.nbf - verify.clockTolerance > seconds) {
    throw rejection(realm, "TOKEN_INVALID", 'The bearer token\'s "nbf" claim is not valid here');
  }
  if (verify.issuer && claims.iss !== undefined && claims.iss !== verify.issuer) {
    throw rejection(
      realm,
      "TOKEN_UNKNOWN",
      "The bearer token was not issued by the bank's authorisation server",
    );
  }
  if (verify.audience) {
    const aud = claims.aud === undefined ? [] : [claims.aud].flat();
    if (aud.length === 0) {
      throw rejection(realm, "TOKEN_INVALID", 'The bearer token must carry the "aud" claim');
    }
    if (!aud.some((a) => verify.audience!.includes(a))) {
      throw rejection(realm, "TOKEN_INVALID", 'The bearer token\'s "aud" claim is not valid here');
    }
  }
}

export const bearerToken = defineCheck({
  key: "bearer_token",
  description:
    "Verifies OAuth bearer tokens: JWTs against a JWKS (alg, iss, aud, exp), opaque tokens by introspection (RFC 7662); scopes",
  options: modal({
    required: z.boolean().optional().describe(
      "Reject requests without a bearer token; default true for the checkout and installment groups and wherever scopes are set, false elsewhere (a token present is always checked)",
    ),
    verification: z.enum(["jwt", "introspection", "auto"]).default("jwt").describe(
      "How tokens are verified: jwt (signature against the JWKS), introspection (RFC 7662, for opaque tokens), auto (a token shaped like a JWT as jwt, any other by introspection)",
    ),
    introspection: introspectionOptions.optional().describe(
      "The introspection endpoint (RFC 7662) and the gateway's client authentication, for verification introspection or auto; a level that sets it replaces it whole",
    ),
    jwks_url: httpUrl().optional().describe(
      "URL of the authorisation server's JWKS (one of jwks_url and jwks_file)",
    ),
    jwks_file: z.string().min(1).optional().describe(
      "Path of a JWKS file, read at start-up and again at each policy reload (SIGHUP), so a rotated key takes effect without a restart",
    ),
    algorithms: z.array(z.enum(JWS_ALGORITHMS)).min(1).default(["RS256", "PS256", "ES256"])
      .describe("Token signature algorithms accepted (none and HMAC never are)"),
    issuer: z.string().min(1).optional().describe("Required iss claim"),
    audience: z.array(z.string().min(1)).optional().describe(
      "Accepted aud values (one must match); unset: aud is not checked",
    ),
    leeway: duration({ min: "0s", max: "10m" }).prefault("30s").describe(
      "Clock tolerance on exp, nbf and iat, for example 30s",
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
    require_binding: z.boolean().default(false).describe(
      "Refuse a token that is not bound to the request's verified transport certificate: by RFC 8705 cnf.x5t#S256, or by certificate_claim naming the certificate's TPP (401 TOKEN_INVALID); without it an unbound token is good with any TPP's certificate",
    ),
    certificate_claim: z.string().min(1).optional().describe(
      "When set, this claim (for example client_id or azp) must equal the organizationIdentifier of the verified transport certificate (401 TOKEN_INVALID otherwise); a request without a certificate is not compared",
    ),
    refetch_interval: duration({ min: "1s" }).prefault("60s").describe(
      "Least time between two JWKS fetches caused by an unknown kid, for example 60s",
    ),
    cache_max_age: duration({ min: "1s" }).prefault("10m").describe(
      "Age after which the fetched JWKS is fetched again, for example 10m",
    ),
    fetch_timeout: duration({ max: TIMER_MAX }).prefault("2s").describe(
      "Deadline of one JWKS fetch, for example 2s",
    ),
    realm: z.string().min(1).default("xs2a-edge").describe(
      "Realm of the WWW-Authenticate challenge",
    ),
  }, "off"),
  validate(options) {
    if (options.mode === "off") return [];
    const problems: string[] = [];
    if (options.verification !== "introspection") {
      if (!options.jwks_url === !options.jwks_file) {
        problems.push("give one of jwks_url and jwks_file");
      } else if (options.jwks_file) {
        const jwks = readJwksFile(options.jwks_file);
        if (jwks instanceof Error) problems.push(`jwks_file: ${jwks.message}`);
      }
    }
    if (options.verification !== "jwt") {
      if (!options.introspection) {
        problems.push(`introspection: needed for verification ${options.verification}`);
      } else problems.push(...introspectionProblems(options.introspection));
    }
    return problems;
  },
  create(options, { operation, services }) {
    // Scopes protect nothing if a request without a token passes: they make the token required
    // unless the policy says `required: false` itself (at any level).
    const required = options.required ??
      (TOKEN_GROUPS.includes(operation.group) || options.scopes.length > 0);
    const verification = options.verification;
    const keys = verification === "introspection" ? undefined : keySet({
      url: options.jwks_url,
      file: options.jwks_file,
      cooldownMs: options.refetch_interval,
      maxAgeMs: options.cache_max_age,
      timeoutMs: options.fetch_timeout,
    }, services);
    const introspect = verification === "jwt" || !options.introspection
      ? undefined
      : introspector(options.introspection, services);
    const realm = options.realm;
    const binding = { claim: options.certificate_claim, required: options.require_binding };
    const verify = {
      // A token without exp would be good forever (issue 18 item 16).
      requiredClaims: ["exp"],
      algorithms: options.algorithms,
      issuer: options.issuer,
      audience: options.audience,
      clockTolerance: options.leeway / 1000,
    };
    const verified = keys && tokenVerifier(keys, verify);
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
      const token = match[1];
      let claims: JWTPayload;
      if (introspect && (!keys || !looksLikeJwt(token))) {
        try {
          claims = await introspect.claims(token);
        } catch (error) {
          if (error instanceof InactiveToken) {
            throw rejection(realm, "TOKEN_INVALID", "The bearer token is not active");
          }
          services.log.error({
            msg: "token introspection unavailable",
            op: operation.id,
            error: errorText(error),
          });
          throw new GatewayError(
            503,
            "UPSTREAM_UNAVAILABLE",
            "The authorisation server cannot check bearer tokens now",
            { headers: { "retry-after": String(RETRY_AFTER_SECONDS.keysUnavailable) } },
          );
        }
        checkIntrospected(claims, verify, services.now(), realm);
      } else {
        try {
          claims = await verified!(token, services.now());
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
      bindToCertificate(c.get("tppCertificate"), claims, binding, realm);
      if (typeof claims.sub === "string" && claims.sub !== "") c.set("tokenSubject", claims.sub);
      const clientId = claims[options.client_id_claim];
      if (!c.get("tpp") && typeof clientId === "string" && clientId !== "") {
        c.set("tpp", { id: clientId, roles: [], domains: [] });
      }
      return next();
    };
  },
});
