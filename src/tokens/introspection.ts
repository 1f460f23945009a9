/**
 * Opaque access tokens (RFC 7662): the authorisation server's introspection endpoint is asked
 * whether a token is active, the gateway authenticating as an OAuth client (RFC 6749 client
 * secret in HTTP Basic, or an RFC 7523 private_key_jwt assertion). Active answers are cached
 * until the token's `exp` and at most the policy's TTL, inactive ones briefly, so that a TPP
 * sending the same token costs one request per TTL. An endpoint that cannot answer is the bank's
 * problem: it is never reported as an invalid token. `/readyz` shows each endpoint's state: the
 * last answer of the readiness interval, or a probe with a token no server knows.
 */
import type { JWTPayload } from "jose";
import { z } from "zod";
import { BoundedCache } from "../pki/lru.ts";
import { duration, httpUrl, TIMER_MAX } from "../lib/fields.ts";
import type { Metrics } from "../lib/metrics.ts";
import { policyFileText } from "../lib/policy_files.ts";
import { healthError, type SourceHealth } from "../lib/health.ts";
import { lazy } from "../lib/lazy.ts";

/** jose's parts, loaded with the first client assertion (a start never signs one). */
const jose = lazy(async () => ({
  ...await import("jose/key/import"),
  ...await import("jose/jwt/sign"),
}));

/** Algorithms of private_key_jwt client assertions. */
const ASSERTION_ALGORITHMS = ["RS256", "PS256", "ES256"] as const;

/** `bearer_token.introspection`: the endpoint and how the gateway authenticates to it. */
export const introspectionOptions = z.object({
  url: httpUrl().describe(
    "The introspection endpoint (RFC 7662), for example ${OAUTH_INTROSPECTION_URL}",
  ),
  client_id: z.string().min(1).describe("The gateway's client id at the authorisation server"),
  client_auth: z.enum(["basic", "private_key_jwt"]).default("basic").describe(
    "basic: client_secret in HTTP Basic (RFC 6749 2.3.1); private_key_jwt: a signed client assertion (RFC 7523)",
  ),
  client_secret: z.string().min(1).optional().describe(
    "The client secret for basic, from ${ENV}",
  ),
  private_key: z.string().min(1).optional().describe(
    "For private_key_jwt: PKCS#8 PEM private key, inline or the path of a file, from ${ENV}",
  ),
  key_algorithm: z.enum(ASSERTION_ALGORITHMS).default("RS256").describe(
    "Signature algorithm of the client assertion",
  ),
  key_id: z.string().min(1).optional().describe("kid of the client assertion's header"),
  cache_ttl: duration({ min: "0s", max: "1h" }).prefault("5m").describe(
    "Longest time an active answer is reused (never past the token's exp); 0s: ask every time",
  ),
  negative_cache_ttl: duration({ min: "0s", max: "5m" }).prefault("10s").describe(
    "Time an inactive answer is reused",
  ),
  timeout: duration({ max: TIMER_MAX }).prefault("2s").describe(
    "Deadline of one introspection request, for example 2s",
  ),
  cache_size: z.int().min(1).default(10_000).describe(
    "Answers kept in memory (least recently used go first)",
  ),
}).strict();

export type IntrospectionOptions = z.output<typeof introspectionOptions>;

/** The PEM text of a private_key option: inline, or read from its file. */
export function privateKeyPem(source: string): string {
  // Read ahead with the policy (src/lib/policy_files.ts): no synchronous read on Deno Deploy.
  return source.includes("-----BEGIN") ? source : policyFileText(source);
}

/** Problems of the options, for the check's validate(). */
export function introspectionProblems(options: IntrospectionOptions): string[] {
  if (options.client_auth === "basic" && !options.client_secret) {
    return ["introspection.client_secret: needed for client_auth basic"];
  }
  if (options.client_auth === "private_key_jwt") {
    if (!options.private_key) {
      return ["introspection.private_key: needed for client_auth private_key_jwt"];
    }
    try {
      if (!privateKeyPem(options.private_key).includes("-----BEGIN PRIVATE KEY-----")) {
        return ["introspection.private_key: must be a PKCS#8 PEM private key"];
      }
    } catch (error) {
      return [`introspection.private_key: cannot read file: ${(error as Error).message}`];
    }
  }
  return [];
}

/** The token is not active (RFC 7662 `active: false`). */
export class InactiveToken extends Error {}

/** The endpoint did not give a usable answer; the text says why. */
export class IntrospectionUnavailable extends Error {}

interface Answer {
  claims?: JWTPayload;
  until: number;
}

/** What the introspector needs from the app. */
export interface IntrospectionServices {
  fetch: typeof fetch;
  /** Milliseconds since the epoch. */
  now(): number;
  metrics?: Pick<Metrics, "introspection">;
}

function formEncode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, "+");
}

async function tokenKey(token: string): Promise<string> {
  const hash = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token));
  return btoa(String.fromCharCode(...new Uint8Array(hash)));
}

/** Asks one introspection endpoint, with a cache. */
export class Introspector {
  readonly #options: IntrospectionOptions;
  readonly #services: IntrospectionServices;
  readonly #answers: BoundedCache<string, Answer>;
  readonly #pending = new Map<string, Promise<Answer>>();
  #key?: Promise<CryptoKey>;
  /** The last request's outcome: when, and why it failed. */
  #last?: { at: number; error?: string };
  /** Requests sent, for tests and metrics. */
  requests = 0;

  /** The endpoint. */
  get url(): string {
    return this.#options.url;
  }

  constructor(options: IntrospectionOptions, services: IntrospectionServices) {
    this.#options = options;
    this.#services = services;
    this.#answers = new BoundedCache(options.cache_size);
  }

  /**
   * The claims of an active token; throws {@link InactiveToken} or
   * {@link IntrospectionUnavailable}.
   */
  async claims(token: string): Promise<JWTPayload> {
    const key = await tokenKey(token);
    const now = this.#services.now();
    let answer = this.#answers.get(key);
    if (!answer || now >= answer.until) {
      let pending = this.#pending.get(key);
      if (!pending) {
        pending = this.#ask(token).finally(() => this.#pending.delete(key));
        this.#pending.set(key, pending);
      }
      answer = await pending;
      if (answer.until > this.#services.now()) this.#answers.set(key, answer);
    }
    if (!answer.claims) throw new InactiveToken("The bearer token is not active");
    return answer.claims;
  }

  async #ask(token: string): Promise<Answer> {
    try {
      const answer = await this.#request(token);
      this.#services.metrics?.introspection.inc({
        outcome: answer.claims ? "active" : "inactive",
      });
      return answer;
    } catch (error) {
      this.#services.metrics?.introspection.inc({ outcome: "unavailable" });
      throw error;
    }
  }

  /**
   * The endpoint's state: from the last answer a token got within `recentMs`, else from a probe
   * now with a random token no server knows (any well-formed answer, `active: false`, is up).
   */
  async health(recentMs: number): Promise<SourceHealth> {
    const source = this.#options.url;
    const last = this.#last;
    if (!last || this.#services.now() - last.at >= recentMs) {
      const bytes = crypto.getRandomValues(new Uint8Array(24));
      await this.#request(`readyz-${btoa(String.fromCharCode(...bytes))}`).catch(() => {});
    }
    const error = this.#last?.error;
    return error === undefined ? { source, state: "up" } : { source, state: "down", error };
  }

  async #request(token: string): Promise<Answer> {
    try {
      const answer = await this.#send(token);
      this.#last = { at: this.#services.now() };
      return answer;
    } catch (error) {
      this.#last = { at: this.#services.now(), error: healthError(error) };
      throw error;
    }
  }

  async #send(token: string): Promise<Answer> {
    const options = this.#options;
    const headers: Record<string, string> = {
      "content-type": "application/x-www-form-urlencoded",
      accept: "application/json",
    };
    let body = `token=${formEncode(token)}&token_type_hint=access_token`;
    if (options.client_auth === "basic") {
      headers.authorization = `Basic ${
        btoa(`${formEncode(options.client_id)}:${formEncode(options.client_secret ?? "")}`)
      }`;
    } else {
      body += `&client_id=${formEncode(options.client_id)}` +
        "&client_assertion_type=" +
        formEncode("urn:ietf:params:oauth:client-assertion-type:jwt-bearer") +
        `&client_assertion=${await this.#assertion()}`;
    }
    this.requests++;
    let response: Response;
    try {
      response = await this.#services.fetch(options.url, {
        method: "POST",
        headers,
        body,
        signal: AbortSignal.timeout(options.timeout),
      });
    } catch (error) {
      throw new IntrospectionUnavailable(`The introspection endpoint is unreachable: ${error}`);
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new IntrospectionUnavailable(`The introspection endpoint answered ${response.status}`);
    }
    let parsed: unknown;
    try {
      parsed = await response.json();
    } catch {
      throw new IntrospectionUnavailable("The introspection endpoint answered no JSON");
    }
    const answer = parsed as Record<string, unknown> | null;
    if (!answer || typeof answer !== "object" || typeof answer.active !== "boolean") {
      throw new IntrospectionUnavailable('The introspection answer has no boolean "active"');
    }
    const now = this.#services.now();
    if (!answer.active) return { until: now + options.negative_cache_ttl };
    const exp = typeof answer.exp === "number" ? answer.exp * 1000 : Infinity;
    return { claims: answer as JWTPayload, until: Math.min(now + options.cache_ttl, exp) };
  }

  /** An RFC 7523 client assertion for this request. */
  async #assertion(): Promise<string> {
    const options = this.#options;
    const { importPKCS8, SignJWT } = await jose();
    this.#key ??= importPKCS8(privateKeyPem(options.private_key!), options.key_algorithm);
    const now = Math.floor(this.#services.now() / 1000);
    return await new SignJWT({})
      .setProtectedHeader({
        alg: options.key_algorithm,
        ...(options.key_id ? { kid: options.key_id } : {}),
      })
      .setIssuer(options.client_id)
      .setSubject(options.client_id)
      .setAudience(options.url)
      .setJti(crypto.randomUUID())
      .setIssuedAt(now)
      .setExpirationTime(now + 60)
      .sign(await this.#key);
  }
}

const introspectors = new WeakMap<IntrospectionServices, Map<string, Introspector>>();

/** The app's introspectors of the endpoints in `urls` (the policy in force). */
export function introspectorsOf(
  services: IntrospectionServices,
  urls: Set<string>,
): Introspector[] {
  return [...introspectors.get(services)?.values() ?? []].filter((i) => urls.has(i.url));
}

/** The introspector of one endpoint configuration, made once per app (services). */
export function introspector(
  options: IntrospectionOptions,
  services: IntrospectionServices,
): Introspector {
  let byOptions = introspectors.get(services);
  if (!byOptions) introspectors.set(services, byOptions = new Map());
  const id = JSON.stringify(options);
  let found = byOptions.get(id);
  if (!found) byOptions.set(id, found = new Introspector(options, services));
  return found;
}

/** Whether a token looks like a compact JWS (three base64url parts, a JSON header with alg). */
export function looksLikeJwt(token: string): boolean {
  const parts = token.split(".");
  if (parts.length !== 3 || parts.some((p) => !/^[A-Za-z0-9_-]+$/.test(p))) return false;
  try {
    const header = JSON.parse(atob(parts[0].replace(/-/g, "+").replace(/_/g, "/")));
    return typeof header === "object" && header !== null && typeof header.alg === "string";
  } catch {
    return false;
  }
}
