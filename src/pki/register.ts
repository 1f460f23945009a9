/**
 * The TPP register (`trust.register`): which TPPs the national competent authorities authorise
 * today, and for which services (PIS, AIS, PIIS), as the national registers and the EBA register
 * say. A certificate can outlive its TPP's authorisation; the register is the bank's list of
 * who may call now. Entries are keyed by the organizationIdentifier of the TPP's certificates
 * (`PSDGE-NBG-123456`).
 *
 * A file is read and validated when the policy loads (a bad file stops start-up or refuses the
 * reload with its path); a URL is fetched when first needed. Either is read again in the
 * background at the first request after each `refresh_interval`; a refresh that fails keeps the
 * entries already loaded (logged and counted). A policy reload reads the register anew.
 * `/readyz` shows its state (`health`): a register never loaded is loaded then.
 */
import { z } from "zod";
import type { Group } from "../psd2/catalogue.ts";
import { GatewayError } from "../psd2/errors.ts";
import { RETRY_AFTER_SECONDS } from "../psd2/retry_after.ts";
import type { Logger } from "../lib/log.ts";
import { errorText } from "../lib/mask.ts";
import type { Metrics } from "../lib/metrics.ts";
import { byteSize, duration, TIMER_MAX } from "../lib/fields.ts";
import { policyFileText } from "../lib/policy_files.ts";
import { healthError, type SourceHealth } from "../lib/health.ts";

/** The services a TPP can be authorised for (PSD2 Art. 4: payment initiation, account information, card-based funds confirmation). */
export const REGISTER_SERVICES = ["PIS", "AIS", "PIIS"] as const;
export type RegisterService = typeof REGISTER_SERVICES[number];

const service = z.enum(REGISTER_SERVICES);
const country = z.string().regex(/^[A-Z]{2}$/, "must be an ISO 3166-1 alpha-2 country code");

/** One TPP in the register. */
export const registerEntry = z.object({
  id: z.string().regex(
    /^PSD[A-Z]{2}-[A-Z0-9]{2,8}-[A-Za-z0-9._-]+$/,
    "must be an organizationIdentifier such as PSDGE-NBG-123456 (PSD, country, NCA id, authorisation number)",
  ).describe(
    "The TPP's organizationIdentifier (ETSI TS 119 495), as its eIDAS certificates carry it: PSD + country + - + NCA id + - + authorisation number",
  ),
  name: z.string().min(1).optional().describe("The TPP's legal name, for operators"),
  country: country.describe("The home country of the authorisation (ISO 3166-1 alpha-2)"),
  status: z.enum(["authorised", "registered", "suspended", "withdrawn"]).describe(
    "authorised (PIS) and registered (AIS-only) TPPs may call; suspended and withdrawn ones may not",
  ),
  services: z.array(service).describe("The services the home authority authorises"),
  passports: z.record(country, z.array(service)).optional().describe(
    "Services passported into other countries, by country (EBA register); needed where the bank's country is not the home country",
  ),
}).strict().describe("A TPP of the register");

/** A register file (`config/tpp_register.example.json`). */
export const registerFile = z.object({
  $schema: z.string().optional().describe("The JSON Schema of this file, for editors"),
  updated: z.iso.datetime({ offset: true }).optional().describe(
    "When the register was exported, for operators (ISO 8601)",
  ),
  entries: z.array(registerEntry).describe("The TPPs"),
}).strict().superRefine((file, context) => {
  const seen = new Set<string>();
  file.entries.forEach((entry, i) => {
    if (seen.has(entry.id)) {
      context.addIssue({
        code: "custom",
        path: ["entries", i, "id"],
        message: `"${entry.id}" is listed twice`,
      });
    }
    seen.add(entry.id);
  });
}).describe("The TPP register: the TPPs authorised today and their services");

export type RegisterEntry = z.output<typeof registerEntry>;

/** The JSON Schema of register files, as committed in config/tpp_register.schema.json. */
export function registerJsonSchema(): string {
  const schema = z.toJSONSchema(registerFile, { io: "input", unrepresentable: "any" });
  return JSON.stringify({ title: "xs2a-edge TPP register", ...schema }, null, 2) + "\n";
}

/** Where the committed register schema lives. */
export const REGISTER_SCHEMA_FILE = "config/tpp_register.schema.json";

const serviceList = (fallback: RegisterService[], group: string) =>
  z.array(service).default(fallback).describe(
    `Register services a TPP needs for the ${group} operations (any one suffices; empty: not checked)`,
  );

/** The entries of a register text, or the problems with their paths. */
export function parseRegister(text: string): Map<string, RegisterEntry> | string[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return [`is not JSON: ${(error as Error).message}`];
  }
  const parsed = registerFile.safeParse(json);
  if (!parsed.success) {
    return parsed.error.issues.map((issue) =>
      `${issue.path.map(String).join(".") || "(root)"}: ${issue.message}`
    );
  }
  return new Map(parsed.data.entries.map((entry) => [entry.id, entry]));
}

/** `trust.register`: where the register comes from and what each group needs. */
export const registerSection = z.object({
  source: z.string().min(1).describe(
    "The register: a JSON file path (read when the policy loads) or an http(s) URL (fetched when first needed), see config/tpp_register.example.json",
  ),
  refresh_interval: duration({ min: "1s", max: TIMER_MAX }).prefault("1h").describe(
    "The register is read again in the background at the first request after this time, for example 1h",
  ),
  fetch_timeout: duration({ max: TIMER_MAX }).prefault("5s").describe(
    "Deadline of one download of a register URL, for example 5s",
  ),
  max_bytes: byteSize().default(32 * 1024 * 1024).describe("Largest register downloaded"),
  country: country.optional().describe(
    "The bank's country: a TPP authorised in another country needs the service passported here; unset: the home services count everywhere",
  ),
  services: z.object({
    pis: serviceList(["PIS"], "payment"),
    ais: serviceList(["AIS"], "account information"),
    consents: serviceList(["AIS"], "consent"),
    cards: serviceList(["AIS"], "card account"),
    piis: serviceList(["PIIS"], "confirmation of funds"),
    baskets: serviceList(["PIS", "AIS"], "signing basket"),
    checkout: serviceList([], "checkout"),
    installment: serviceList([], "installment calculator"),
    products: serviceList([], "product catalogue"),
  }).strict().prefault({}).describe("Register services per operation group"),
}).strict().transform((register, context) => {
  if (/^https?:\/\//i.test(register.source)) return { ...register, initial: undefined };
  let text: string;
  try {
    text = policyFileText(register.source); // read ahead: no synchronous read on Deno Deploy
  } catch (error) {
    context.addIssue({
      code: "custom",
      path: ["source"],
      message: `cannot read file "${register.source}": ${(error as Error).message}`,
    });
    return { ...register, initial: undefined };
  }
  const entries = parseRegister(text);
  if (Array.isArray(entries)) {
    for (const problem of entries) {
      context.addIssue({
        code: "custom",
        path: ["source"],
        message: `file "${register.source}": ${problem}`,
      });
    }
    return { ...register, initial: undefined };
  }
  return { ...register, initial: entries };
}).optional().describe(
  "The TPP register: a TPP identified by its certificate must be in it, authorised, with the service of the operation's group (unset: no register check)",
);

/** The parsed `trust.register` section. */
export type RegisterConfig = NonNullable<z.output<typeof registerSection>>;

/** What the register needs from the app. */
export interface RegisterServices {
  fetch: typeof fetch;
  /** Milliseconds since the epoch. */
  now(): number;
  log: Logger;
  metrics: Metrics;
}

const REGISTER_SERVICE_NAMES: Record<RegisterService, string> = {
  PIS: "payment initiation (PIS)",
  AIS: "account information (AIS)",
  PIIS: "funds confirmation (PIIS)",
};

/** The register of one loaded policy. */
export class TppRegister {
  readonly #config: RegisterConfig;
  readonly #services: RegisterServices;
  #entries?: Map<string, RegisterEntry>;
  #loadedAt = 0;
  #pending?: Promise<void>;
  #failedAt = 0;
  /** Why the last load failed. */
  #error?: string;

  constructor(config: RegisterConfig, services: RegisterServices) {
    this.#config = config;
    this.#services = services;
    if (config.initial) {
      this.#entries = config.initial;
      this.#loadedAt = services.now();
    }
  }

  /** The entries, loading them first when none are there yet; undefined when that fails. */
  async #current(): Promise<Map<string, RegisterEntry> | undefined> {
    const now = this.#services.now();
    const due = now >= this.#loadedAt + this.#config.refresh_interval &&
      now >= this.#failedAt + Math.min(this.#config.refresh_interval, 30_000);
    if (this.#entries) {
      if (due) this.#refresh().catch(() => {});
      return this.#entries;
    }
    if (due || this.#pending) await this.#refresh().catch(() => {});
    return this.#entries;
  }

  #refresh(): Promise<void> {
    this.#pending ??= this.#load().finally(() => this.#pending = undefined);
    return this.#pending;
  }

  async #load(): Promise<void> {
    const { source } = this.#config;
    try {
      let text: string;
      if (/^https?:\/\//i.test(source)) {
        const response = await this.#services.fetch(source, {
          headers: { accept: "application/json" },
          signal: AbortSignal.timeout(this.#config.fetch_timeout),
        });
        if (!response.ok) {
          await response.body?.cancel();
          throw new Error(`HTTP ${response.status}`);
        }
        const length = Number(response.headers.get("content-length") ?? "0");
        if (length > this.#config.max_bytes) {
          await response.body?.cancel();
          throw new Error(`larger than ${this.#config.max_bytes} bytes`);
        }
        text = await response.text();
        if (text.length > this.#config.max_bytes) {
          throw new Error(`larger than ${this.#config.max_bytes} bytes`);
        }
      } else {
        text = await Deno.readTextFile(source);
      }
      const entries = parseRegister(text);
      if (Array.isArray(entries)) throw new Error(entries.slice(0, 5).join("; "));
      this.#entries = entries;
      this.#loadedAt = this.#services.now();
      this.#services.metrics.register.inc({ outcome: "loaded" });
    } catch (error) {
      this.#failedAt = this.#services.now();
      this.#error = healthError(error);
      this.#services.metrics.register.inc({ outcome: "failed" });
      this.#services.log.error({
        msg: this.#entries
          ? "tpp register refresh failed; the entries loaded before stay in force"
          : "tpp register unavailable",
        source,
        error: errorText(error),
      });
      throw error;
    }
  }

  /**
   * The register's state: up with entries loaded (and no refresh failed since), degraded when a
   * refresh failed and the entries loaded before stay in force, down when none could be loaded
   * (every request of a group that needs the register gets 503). A register never loaded (a URL
   * before the first request) is loaded now, within the retry pause of a failed load.
   */
  async health(): Promise<SourceHealth> {
    const source = this.#config.source;
    if (!this.#entries) await this.#current();
    if (!this.#entries) return { source, state: "down", error: this.#error ?? "Not loaded" };
    const detail = { entries: this.#entries.size, loaded: new Date(this.#loadedAt).toISOString() };
    return this.#failedAt > this.#loadedAt
      ? { source, state: "degraded", error: `Refresh failed: ${this.#error}`, ...detail }
      : { source, state: "up", ...detail };
  }

  /**
   * Throws unless the TPP may use the group's services now: absent from the register, or
   * suspended or withdrawn, is 401 CERTIFICATE_BLOCKED; without the service (or without it
   * passported into the bank's country) 403 ROLE_INVALID; no register to be had 503.
   */
  async check(tpp: string, group: Group, path: string): Promise<void> {
    const needed = this.#config.services[group];
    if (needed.length === 0) return;
    const entries = await this.#current();
    if (!entries) {
      throw new GatewayError(503, "UPSTREAM_UNAVAILABLE", "The TPP register is unavailable now", {
        headers: { "retry-after": String(RETRY_AFTER_SECONDS.keysUnavailable) },
      });
    }
    const entry = entries.get(tpp);
    if (!entry) {
      throw new GatewayError(
        401,
        "CERTIFICATE_BLOCKED",
        `TPP "${tpp}" is not in the TPP register of authorised TPPs`,
        { path },
      );
    }
    if (entry.status === "suspended" || entry.status === "withdrawn") {
      throw new GatewayError(
        401,
        "CERTIFICATE_BLOCKED",
        `TPP "${tpp}"'s authorisation is ${entry.status} in the TPP register`,
        { path },
      );
    }
    const here = this.#config.country;
    const abroad = here !== undefined && entry.country !== here;
    const offered = abroad ? entry.passports?.[here] ?? [] : entry.services;
    if (needed.some((s) => offered.includes(s))) return;
    const wanted = needed.map((s) => REGISTER_SERVICE_NAMES[s]).join(" or ");
    throw new GatewayError(
      401,
      "ROLE_INVALID",
      abroad
        ? `TPP "${tpp}" (authorised in ${entry.country}) has ${wanted} not passported to ${here} in the TPP register`
        : `TPP "${tpp}" is not authorised for ${wanted} in the TPP register; it is for ${
          offered.length > 0 ? offered.join(", ") : "none"
        }`,
      { path },
    );
  }
}

const registers = new WeakMap<RegisterConfig, WeakMap<RegisterServices, TppRegister>>();

/** The register of a loaded policy's `trust.register` (a reload brings a new one). */
export function tppRegister(config: RegisterConfig, services: RegisterServices): TppRegister {
  let byServices = registers.get(config);
  if (!byServices) registers.set(config, byServices = new WeakMap());
  let register = byServices.get(services);
  if (!register) byServices.set(services, register = new TppRegister(config, services));
  return register;
}
