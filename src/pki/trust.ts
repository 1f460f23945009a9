/**
 * The trust store: the policy's anchors, intermediates, blocked list and role rules, and the
 * checks every TPP certificate goes through (transport or signing): chain to an anchor, validity
 * dates, blocked list, PSD2 roles. Parsing and chain verification happen once per certificate
 * (bounded cache); per request only the dates and the blocked list are compared.
 */
import type { Group } from "../psd2/catalogue.ts";
import { GatewayError } from "../psd2/errors.ts";
import type { CertificateInfo } from "./certificate.ts";
import { CertificateFormatError, normalSerial } from "./pem.ts";
import { BoundedCache } from "./lru.ts";
import type { PkiSections } from "./sections.ts";
import { lazy } from "../lib/lazy.ts";

/** jose's key import, loaded with the first signing certificate's key (never at start-up). */
const joseKeys = lazy(() => import("jose/key/import"));

type Trust = PkiSections["trust"];
type TppKeys = PkiSections["tpp_keys"];

/** How a certificate is named in error texts and where it came from. */
export interface CertificateRole {
  /** For example "TPP certificate" or "signing certificate". */
  label: string;
  /** The header it came in (the error's `path`). */
  path: string;
}

type ChainResult =
  | { ok: true; notBefore: number; notAfter: number; chain: CertificateInfo[] }
  | { ok: false; reason: string };

/**
 * Parses a certificate with src/pki/certificate.ts, imported on first use: a policy without
 * certificates never loads @peculiar/x509 until a request brings one.
 */
async function parseCertificate(input: string | Uint8Array): Promise<CertificateInfo> {
  const { parseCertificate } = await import("./certificate.ts");
  return await parseCertificate(input);
}

/** Compares DNs loosely: case, and spaces around separators, do not matter. */
function normalDn(dn: string): string {
  return dn.toLowerCase().replace(/\s*([,=+])\s*/g, "$1").trim();
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.000Z$/, "Z");
}

/** The checks of TPP certificates against one policy's trust section. */
export class TrustStore {
  readonly #trust: Trust;
  readonly #tppKeys: TppKeys;
  readonly #certificates: BoundedCache<string, Promise<CertificateInfo>>;
  readonly #chains: BoundedCache<string, Promise<ChainResult>>;
  readonly #keys = new WeakMap<CertificateInfo, Map<string, Promise<CryptoKey>>>();
  readonly #issuers = new WeakMap<CertificateInfo, CertificateInfo>();
  readonly #blockedSha = new Set<string>();
  readonly #blockedSerials: { serial: string; issuer?: string }[] = [];
  #loaded?: Promise<{
    anchors: CertificateInfo[];
    intermediates: CertificateInfo[];
    byKid: Map<string, CertificateInfo>;
    byX5t: Map<string, CertificateInfo>;
  }>;

  constructor(trust: Trust, tppKeys: TppKeys = []) {
    this.#trust = trust;
    this.#tppKeys = tppKeys;
    this.#certificates = new BoundedCache(trust.cache_size);
    this.#chains = new BoundedCache(trust.cache_size);
    for (const entry of trust.blocked) {
      if (entry.sha256) this.#blockedSha.add(entry.sha256.replace(/:/g, "").toLowerCase());
      if (entry.serial) {
        this.#blockedSerials.push({
          serial: normalSerial(entry.serial.replace(/:/g, "")),
          issuer: entry.issuer ? normalDn(entry.issuer) : undefined,
        });
      }
    }
  }

  /** Starts parsing anchors, intermediates and TPP keys now (at start-up), not on first use. */
  warm(): void {
    this.#load().catch(() => {
      // Reported to the first request that needs them.
    });
  }

  /** Anchors, intermediates and TPP keys, parsed once. */
  #load() {
    this.#loaded ??= (async () => {
      const keys = await Promise.all(
        this.#tppKeys.map(async (k) => ({
          kid: k.kid,
          info: await parseCertificate(k.certificate),
        })),
      );
      return {
        anchors: await Promise.all(this.#trust.anchors.map((der) => parseCertificate(der))),
        intermediates: await Promise.all(
          this.#trust.intermediates.map((der) => parseCertificate(der)),
        ),
        byKid: new Map(keys.filter((k) => k.kid).map((k) => [k.kid!, k.info])),
        byX5t: new Map(keys.map((k) => [k.info.x5tS256, k.info])),
      };
    })();
    return this.#loaded;
  }

  /**
   * Parses a certificate (PEM, base64 or DER text), once per distinct value; an unreadable one is
   * 401 CERTIFICATE_INVALID.
   */
  async certificate(source: string, role: CertificateRole): Promise<CertificateInfo> {
    const parsed = this.#certificates.getOrSet(source, () => parseCertificate(source));
    try {
      return await parsed;
    } catch (error) {
      if (!(error instanceof CertificateFormatError)) throw error;
      throw new GatewayError(
        401,
        "CERTIFICATE_INVALID",
        `The ${role.label} cannot be read: ${error.message.charAt(0).toLowerCase()}${
          error.message.slice(1)
        }`,
        { path: role.path },
      );
    }
  }

  /** A TPP signing certificate named by kid or x5t#S256 in the policy's tpp_keys. */
  async signingKey(ref: { kid?: string; x5tS256?: string }): Promise<CertificateInfo | undefined> {
    const { byKid, byX5t } = await this.#load();
    if (ref.x5tS256 !== undefined) return byX5t.get(ref.x5tS256);
    if (ref.kid !== undefined) return byKid.get(ref.kid);
    return undefined;
  }

  async #buildChain(leaf: CertificateInfo, extra: CertificateInfo[]): Promise<ChainResult> {
    const { anchors, intermediates } = await this.#load();
    const pool = [...intermediates, ...extra];
    const chain = [leaf];
    let current = leaf;
    for (let depth = 0; depth < 8; depth++) {
      const anchor = anchors.find((a) => a.sha256 === current.sha256) ??
        await this.#issuerAmong(current, anchors);
      if (anchor) {
        if (anchor.sha256 !== current.sha256) chain.push(anchor);
        return {
          ok: true,
          chain,
          notBefore: Math.max(...chain.map((c) => c.cert.notBefore.getTime())),
          notAfter: Math.min(...chain.map((c) => c.cert.notAfter.getTime())),
        };
      }
      const next = await this.#issuerAmong(
        current,
        pool.filter((p) => p.isCa && !chain.includes(p)),
      );
      if (!next) break;
      chain.push(next);
      current = next;
    }
    return { ok: false, reason: "does not chain to a trust anchor of the bank" };
  }

  async #issuerAmong(
    cert: CertificateInfo,
    candidates: CertificateInfo[],
  ): Promise<CertificateInfo | undefined> {
    const issuer = normalDn(cert.cert.issuer);
    for (const candidate of candidates) {
      if (normalDn(candidate.cert.subject) !== issuer) continue;
      try {
        const signed = await cert.cert.verify({
          publicKey: candidate.cert.publicKey,
          signatureOnly: true,
        });
        if (signed) return candidate;
      } catch {
        // A key the signature algorithm does not fit: not this issuer.
      }
    }
    return undefined;
  }

  #isBlocked(info: CertificateInfo): boolean {
    if (this.#blockedSha.has(info.sha256)) return true;
    // Run for every certificate of the chain on every request: the issuer's DN is normalised
    // only when some serial is blocked.
    if (this.#blockedSerials.length === 0) return false;
    const issuer = normalDn(info.cert.issuer);
    return this.#blockedSerials.some((b) =>
      b.serial === info.serial && (b.issuer === undefined || b.issuer === issuer)
    );
  }

  /**
   * The checks every TPP certificate (transport or signing) goes through; returns the TPP id:
   * chains to an anchor (401 CERTIFICATE_INVALID), not blocked (CERTIFICATE_BLOCKED), inside its
   * validity dates and those of its chain, with the policy's clock skew (CERTIFICATE_EXPIRED; not
   * yet valid: CERTIFICATE_INVALID), carries an organizationIdentifier (CERTIFICATE_INVALID) and
   * one of the roles the operation's group needs (ROLE_INVALID).
   */
  async checkTpp(
    info: CertificateInfo,
    options: CertificateRole & { group: Group; now: number; extra?: CertificateInfo[] },
  ): Promise<string> {
    await this.#verify(info, options);
    if (!info.organizationId) {
      throw new GatewayError(
        401,
        "CERTIFICATE_INVALID",
        `The ${options.label} must carry the TPP id in organizationIdentifier (2.5.4.97)`,
        { path: options.path },
      );
    }
    this.#requireRoles(info, options.group, options);
    return info.organizationId;
  }

  async #verify(
    info: CertificateInfo,
    options: CertificateRole & { now: number; extra?: CertificateInfo[] },
  ): Promise<void> {
    const extra = options.extra ?? [];
    const key = [info.sha256, ...extra.map((e) => e.sha256)].join(",");
    const result = await this.#chains.getOrSet(key, () => this.#buildChain(info, extra));
    const { label, path } = options;
    if (!result.ok) {
      throw new GatewayError(401, "CERTIFICATE_INVALID", `The ${label} ${result.reason}`, { path });
    }
    if (result.chain.length > 1) this.#issuers.set(info, result.chain[1]);
    if (result.chain.some((c) => this.#isBlocked(c))) {
      throw new GatewayError(
        401,
        "CERTIFICATE_BLOCKED",
        `The ${label} (serial ${info.serial}) is blocked by the bank`,
        { path },
      );
    }
    const skew = this.#trust.clock_skew;
    if (options.now > result.notAfter + skew) {
      const own = info.cert.notAfter.getTime() === result.notAfter;
      throw new GatewayError(
        401,
        "CERTIFICATE_EXPIRED",
        `The ${label}${own ? "" : "'s issuing CA certificate"} expired on ${iso(result.notAfter)}`,
        { path },
      );
    }
    if (options.now < result.notBefore - skew) {
      throw new GatewayError(
        401,
        "CERTIFICATE_INVALID",
        `The ${label} is not valid before ${iso(result.notBefore)}`,
        { path },
      );
    }
  }

  /**
   * The CA that issued a certificate, once {@link checkTpp} verified its chain (`undefined` for a
   * certificate that is itself a trust anchor).
   */
  issuerOf(info: CertificateInfo): CertificateInfo | undefined {
    return this.#issuers.get(info);
  }

  /** 401 ROLE_INVALID unless the certificate has one of the roles the group needs. */
  #requireRoles(info: CertificateInfo, group: Group, role: CertificateRole): void {
    const needed = this.#trust.roles[group];
    if (needed.length === 0 || needed.some((r) => info.roles.includes(r))) return;
    throw new GatewayError(
      401,
      "ROLE_INVALID",
      `The ${role.label} must carry the PSD2 role ${
        needed.join(" or ")
      } for this operation; it has ${info.roles.length > 0 ? info.roles.join(", ") : "none"}`,
      { path: role.path },
    );
  }

  /** The certificate's public key for a JWS algorithm, imported once per certificate and alg. */
  publicKey(info: CertificateInfo, alg: string): Promise<CryptoKey> {
    let byAlg = this.#keys.get(info);
    if (!byAlg) this.#keys.set(info, byAlg = new Map());
    let key = byAlg.get(alg);
    if (!key) {
      const pem = info.cert.toString("pem");
      // Extractable: an RSA key's public numbers are read for verification (signing/value.ts).
      key = joseKeys().then(({ importX509 }) => importX509(pem, alg, { extractable: true }));
      byAlg.set(alg, key);
      key.catch(() => byAlg.delete(alg));
    }
    return key;
  }
}

const stores = new WeakMap<Trust, TrustStore>();

/** The one trust store of a loaded policy (shared by every operation's checks). */
export function trustStore(sections: PkiSections): TrustStore {
  let store = stores.get(sections.trust);
  if (!store) {
    store = new TrustStore(sections.trust, sections.tpp_keys);
    store.warm();
    stores.set(sections.trust, store);
  }
  return store;
}
