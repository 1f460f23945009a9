/**
 * Revocation checking of TPP certificates (transport and signing): OCSP (the policy's responder
 * or the certificate's AIA), CRLs (the policy's or the certificate's distribution points), and an
 * OCSP response stapled by the TLS terminator. Every answer is verified before it is believed
 * (src/pki/ocsp.ts, src/pki/crl.ts).
 *
 * The request path is a cache lookup: a status is kept until its nextUpdate, and fetched again in
 * the background when it is due for a refresh (after `refresh_interval`, or at three quarters of
 * its lifetime), while requests keep using the one they have. Only a certificate seen for the
 * first time, or whose status ran out, waits for the network (at most `fetch_timeout`); after a
 * failed fetch, requests do not wait again for `retry_interval`. Each source's last outcome is
 * kept for `/readyz` (`health`): the sources come from the TPPs' certificates, so they are known
 * once asked, and never asked by readiness itself.
 */
import "reflect-metadata";
import {
  AuthorityInfoAccessExtension,
  CRLDistributionPointsExtension,
  X509Certificate,
} from "@peculiar/x509";
import { errorText } from "../lib/mask.ts";
import type { SourceHealth } from "../lib/health.ts";
import type {
  RevocationConfig,
  RevocationOutcome,
  RevocationServices,
} from "./revocation_policy.ts";
import type { CertificateInfo } from "./certificate.ts";
import {
  checkCrlDates,
  checkCrlSignature,
  CrlError,
  isIssuedBy,
  parseCrl,
  type RevocationList,
} from "./crl.ts";
import { BoundedCache } from "./lru.ts";
import { ocspRequest, readOcspResponse, type RevocationStatus } from "./ocsp.ts";

interface Entry {
  outcome: RevocationOutcome;
  /** Until then the outcome is used without waiting. */
  validUntil: number;
  /** From then on a request starts a refresh in the background. */
  refreshAt: number;
}

interface CrlEntry {
  list: RevocationList;
  /** Signature checks by issuer (SHA-256), made once. */
  signedBy: Map<string, Promise<void>>;
  validUntil: number;
  refreshAt: number;
}

class Unavailable extends Error {}

/** Sources whose last outcome is kept for readiness (the most recently asked). */
const KEPT_SOURCES = 100;

/** The OCSP responder URLs (http) of a certificate's AIA. */
function ocspUrls(cert: X509Certificate): string[] {
  const aia = cert.getExtension(AuthorityInfoAccessExtension);
  return (aia?.ocsp ?? []).filter((n) => n.type === "url" && /^https?:/i.test(n.value))
    .map((n) => n.value);
}

/** The CRL URLs (http) of a certificate's distribution points. */
function crlUrls(cert: X509Certificate): string[] {
  const cdp = cert.getExtension(CRLDistributionPointsExtension);
  const urls: string[] = [];
  for (const point of cdp?.distributionPoints ?? []) {
    for (const name of point.distributionPoint?.fullName ?? []) {
      const uri = name.uniformResourceIdentifier;
      if (uri && /^https?:/i.test(uri)) urls.push(uri);
    }
  }
  return urls;
}

async function readCapped(response: Response, max: number): Promise<Uint8Array> {
  const length = Number(response.headers.get("content-length") ?? "0");
  if (length > max) {
    await response.body?.cancel();
    throw new Unavailable(`the answer is larger than ${max} bytes`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += chunk.byteLength;
    if (size > max) throw new Unavailable(`the answer is larger than ${max} bytes`);
    chunks.push(chunk);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

/** Checks certificates' revocation with one `trust.revocation` configuration. */
export class RevocationChecker {
  readonly #config: RevocationConfig;
  readonly #services: RevocationServices;
  readonly #skewMs: number;
  readonly #statuses: BoundedCache<string, Entry>;
  readonly #crls: BoundedCache<string, CrlEntry>;
  readonly #pending = new Map<string, Promise<Entry>>();
  readonly #pendingCrls = new Map<string, Promise<CrlEntry>>();
  readonly #failedCrls: BoundedCache<string, number>;
  /** The last outcome of each source asked (`ocsp <url>`, `crl <url>`): when, and why it failed. */
  readonly #sources = new Map<string, { at: number; error?: string }>();

  constructor(config: RevocationConfig, services: RevocationServices, skewMs: number) {
    this.#config = config;
    this.#services = services;
    this.#skewMs = skewMs;
    this.#statuses = new BoundedCache(config.cache_size);
    this.#crls = new BoundedCache(Math.min(config.cache_size, 1000));
    this.#failedCrls = new BoundedCache(1000);
  }

  /**
   * The revocation outcome of `leaf` (issued by `issuer`): from the cache when it holds one
   * still valid (a refresh in the background when one is due), else fetched. A stapled OCSP
   * response (DER) is used when it verifies; one that does not is ignored.
   */
  async check(
    leaf: CertificateInfo,
    issuer: CertificateInfo,
    stapled?: Uint8Array,
  ): Promise<RevocationOutcome> {
    const key = leaf.sha256 + "/" + issuer.sha256;
    const now = this.#services.now();
    const cached = this.#statuses.get(key);
    // A staple is a source of its own: it replaces a cached answer that had none ("unchecked") or
    // could not reach one ("unavailable"), never a status a source gave.
    const undecided = cached?.outcome.kind === "unavailable" ||
      cached?.outcome.kind === "unchecked";
    if (cached && now < cached.validUntil && !(stapled && undecided)) {
      if (now >= cached.refreshAt && !this.#pending.has(key)) {
        this.#fetch(key, leaf, issuer).catch(() => {});
      }
      return cached.outcome;
    }
    if (stapled) {
      const entry = await this.#fromStaple(stapled, leaf, issuer);
      if (entry) {
        this.#statuses.set(key, entry);
        return entry.outcome;
      }
    }
    return (await (this.#pending.get(key) ?? this.#fetch(key, leaf, issuer))).outcome;
  }

  /** Fetches the status (once at a time per certificate) and caches what it finds. */
  #fetch(key: string, leaf: CertificateInfo, issuer: CertificateInfo): Promise<Entry> {
    const started = (async () => {
      try {
        const entry = await this.#lookup(leaf, issuer);
        const previous = this.#statuses.get(key);
        // A refresh that failed keeps a status that is still valid.
        if (
          entry.outcome.kind !== "unavailable" || !previous ||
          previous.outcome.kind === "unavailable" || this.#services.now() >= previous.validUntil
        ) {
          this.#statuses.set(key, entry);
          return entry;
        }
        previous.refreshAt = (entry.outcome as { retryAt: number }).retryAt;
        return previous;
      } finally {
        this.#pending.delete(key);
      }
    })();
    this.#pending.set(key, started);
    return started;
  }

  /** Tries the sources in the policy's order. */
  async #lookup(leaf: CertificateInfo, issuer: CertificateInfo): Promise<Entry> {
    const problems: string[] = [];
    let sources = 0;
    for (const method of this.#config.methods) {
      if (method === "ocsp") {
        const urls = this.#config.ocsp_responder
          ? [this.#config.ocsp_responder]
          : ocspUrls(leaf.cert);
        for (const url of urls) {
          sources++;
          try {
            const entry = await this.#ocsp(url, leaf, issuer);
            this.#answered("ocsp", url);
            return entry;
          } catch (error) {
            problems.push(this.#failed("ocsp", url, error));
          }
        }
      } else {
        for (const source of [...this.#config.crls, ...crlUrls(leaf.cert)]) {
          let entry: CrlEntry;
          try {
            entry = await this.#crl(source);
            // A CRL of another CA (one of the policy's) is no source for this certificate.
            if (!isIssuedBy(entry.list, issuer.cert)) continue;
            sources++;
            await this.#signedBy(entry, issuer);
          } catch (error) {
            if (!(error instanceof CrlError && error.message.startsWith("Its signature"))) {
              sources++;
            }
            problems.push(this.#failed("crl", source, error));
            continue;
          }
          this.#answered("crl", source);
          const revokedAt = entry.list.revoked.get(leaf.serial);
          const outcome: RevocationOutcome = revokedAt !== undefined
            ? { kind: "revoked", source: "crl", revokedAt }
            : { kind: "good", source: "crl" };
          this.#services.metrics.revocation.inc({ source: "crl", outcome: outcome.kind });
          return { outcome, validUntil: entry.validUntil, refreshAt: entry.refreshAt };
        }
      }
    }
    const now = this.#services.now();
    if (sources === 0) {
      return {
        outcome: { kind: "unchecked" },
        validUntil: now + this.#config.refresh_interval,
        refreshAt: now + this.#config.refresh_interval,
      };
    }
    const retryAt = now + this.#config.retry_interval;
    return {
      outcome: { kind: "unavailable", reason: problems.join("; "), retryAt },
      validUntil: retryAt,
      refreshAt: retryAt,
    };
  }

  /** Records a source's outcome for readiness (the oldest forgotten past {@link KEPT_SOURCES}). */
  #answered(source: string, where: string, error?: string): void {
    const key = `${source} ${where}`;
    this.#sources.delete(key);
    this.#sources.set(key, { at: this.#services.now(), ...(error ? { error } : {}) });
    if (this.#sources.size > KEPT_SOURCES) {
      this.#sources.delete(this.#sources.keys().next().value!);
    }
  }

  /**
   * The state of each source asked so far (`ocsp <url>`, `crl <url>`): down when its last answer
   * could not be had or believed. A TPP whose sources are all down gets 503 under `hard`.
   */
  health(): SourceHealth[] {
    return [...this.#sources].map(([source, { at, error }]) => ({
      source,
      state: error === undefined ? "up" : "down",
      ...(error === undefined ? {} : { error }),
      at: new Date(at).toISOString(),
    }));
  }

  #failed(source: string, where: string, error: unknown): string {
    this.#answered(source, where, errorText(error).slice(0, 200));
    this.#services.metrics.revocation.inc({ source, outcome: "unavailable" });
    const text = `${source} ${where}: ${errorText(error)}`;
    this.#services.log.error({
      msg: "revocation source unavailable",
      source,
      where,
      error: errorText(error),
    });
    return text;
  }

  /** When a status fetched now is to be refreshed, and until when it holds. */
  #window(now: number, thisUpdate: number, nextUpdate: number | undefined) {
    const interval = this.#config.refresh_interval;
    const validUntil = nextUpdate !== undefined
      ? nextUpdate + this.#skewMs
      : Math.min(thisUpdate + interval, now + interval);
    const refreshAt = Math.min(now + interval, now + Math.max(0, (validUntil - now) * 3 / 4));
    return { validUntil, refreshAt };
  }

  #checkOptions() {
    return {
      now: this.#services.now(),
      skewMs: this.#skewMs,
      maxAgeMs: this.#config.refresh_interval,
    };
  }

  #entry(status: RevocationStatus, source: string): Entry {
    const outcome: RevocationOutcome = status.status === "revoked"
      ? { kind: "revoked", source, revokedAt: status.revokedAt }
      : { kind: status.status, source };
    return { outcome, ...this.#window(this.#services.now(), status.thisUpdate, status.nextUpdate) };
  }

  async #download(url: string, init: RequestInit): Promise<Uint8Array> {
    const response = await this.#services.fetch(url, {
      ...init,
      signal: AbortSignal.timeout(this.#config.fetch_timeout),
    });
    if (!response.ok) {
      await response.body?.cancel();
      throw new Unavailable(`HTTP ${response.status}`);
    }
    return await readCapped(response, this.#config.crl_max_bytes);
  }

  async #ocsp(url: string, leaf: CertificateInfo, issuer: CertificateInfo): Promise<Entry> {
    const nonce = this.#config.nonce ? crypto.getRandomValues(new Uint8Array(16)) : undefined;
    const body = await ocspRequest(leaf.cert, issuer.cert, nonce);
    const der = await this.#download(url, {
      method: "POST",
      headers: { "content-type": "application/ocsp-request", accept: "application/ocsp-response" },
      body: body as BodyInit,
    });
    const status = await readOcspResponse(der, leaf.cert, issuer.cert, {
      ...this.#checkOptions(),
      nonce,
    });
    this.#services.metrics.revocation.inc({ source: "ocsp", outcome: status.status });
    return this.#entry(status, "ocsp");
  }

  async #fromStaple(
    der: Uint8Array,
    leaf: CertificateInfo,
    issuer: CertificateInfo,
  ): Promise<Entry | undefined> {
    try {
      const status = await readOcspResponse(der, leaf.cert, issuer.cert, this.#checkOptions());
      this.#services.metrics.revocation.inc({ source: "stapled", outcome: status.status });
      return this.#entry(status, "stapled");
    } catch (error) {
      this.#services.metrics.revocation.inc({ source: "stapled", outcome: "unavailable" });
      this.#services.log.error({ msg: "stapled OCSP response ignored", error: errorText(error) });
      return undefined;
    }
  }

  /** A CRL from a URL or file: cached, refreshed in the background when due. */
  async #crl(source: string): Promise<CrlEntry> {
    const now = this.#services.now();
    const cached = this.#crls.get(source);
    const failedUntil = this.#failedCrls.get(source) ?? 0;
    if (cached && now < cached.validUntil) {
      if (now >= cached.refreshAt && now >= failedUntil && !this.#pendingCrls.has(source)) {
        this.#loadCrl(source).catch(() => {});
      }
      return cached;
    }
    if (now < failedUntil) throw new Unavailable("the last attempt failed; retried later");
    return await (this.#pendingCrls.get(source) ?? this.#loadCrl(source));
  }

  #loadCrl(source: string): Promise<CrlEntry> {
    const started = (async () => {
      try {
        const data = /^https?:/i.test(source)
          ? await this.#download(source, { headers: { accept: "application/pkix-crl" } })
          : await Deno.readFile(source);
        const list = parseCrl(data);
        checkCrlDates(list, this.#checkOptions());
        const entry: CrlEntry = {
          list,
          signedBy: new Map(),
          ...this.#window(this.#services.now(), list.thisUpdate, list.nextUpdate),
        };
        this.#crls.set(source, entry);
        return entry;
      } catch (error) {
        this.#failedCrls.set(source, this.#services.now() + this.#config.retry_interval);
        throw error;
      } finally {
        this.#pendingCrls.delete(source);
      }
    })();
    this.#pendingCrls.set(source, started);
    return started;
  }

  /** Verifies the CRL's signature with the issuer's key, once per CRL and issuer. */
  #signedBy(entry: CrlEntry, issuer: CertificateInfo): Promise<void> {
    let verified = entry.signedBy.get(issuer.sha256);
    if (!verified) {
      verified = checkCrlSignature(entry.list, issuer.cert);
      entry.signedBy.set(issuer.sha256, verified);
    }
    return verified;
  }
}

const checkers = new WeakMap<RevocationServices, Map<string, RevocationChecker>>();

/**
 * The checker of one configuration, made once per app (services) and configuration: a policy
 * reload with the same `trust.revocation` keeps the statuses already fetched.
 */
export function revocationChecker(
  config: RevocationConfig,
  services: RevocationServices,
  skewMs: number,
): RevocationChecker {
  let byConfig = checkers.get(services);
  if (!byConfig) checkers.set(services, byConfig = new Map());
  const id = JSON.stringify([config, skewMs]);
  let checker = byConfig.get(id);
  if (!checker) byConfig.set(id, checker = new RevocationChecker(config, services, skewMs));
  return checker;
}
