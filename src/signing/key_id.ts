/**
 * The Berlin Group `keyId="SN=<serial>,CA=<issuer DN>"` of an HTTP signature, matched to the
 * certificate sent in `TPP-Signature-Certificate`. The standard writes the serial in hex and the
 * issuer as a DN; TPPs write that DN as their libraries print one: RFC 4514 (Java's
 * `X500Principal.getName()`, RDNs in reverse order, unknown attributes as `2.5.4.97=#0c...`),
 * OpenSSL's names (`emailAddress`, `OID.2.5.4.97`), spaces percent-encoded (`%20`, the
 * guidelines' example). The DN is therefore compared canonically: each attribute as its OID and
 * its value unescaped, trimmed, spaces folded and case ignored, in any order.
 */
import type { CertificateInfo } from "../pki/certificate.ts";

/** `SN=<serial>,CA=<issuer DN>`; the serial in hex (or, with decimal digits only, decimal). */
const KEY_ID = /^SN=([0-9A-Fa-f]{1,64})\s*,\s*CA=(.+)$/s;

/** Attribute names TPPs' libraries write, upper case, and their OIDs. */
const ATTRIBUTES: Record<string, string> = {
  CN: "2.5.4.3",
  COMMONNAME: "2.5.4.3",
  SN: "2.5.4.4",
  SURNAME: "2.5.4.4",
  SERIALNUMBER: "2.5.4.5",
  C: "2.5.4.6",
  COUNTRYNAME: "2.5.4.6",
  L: "2.5.4.7",
  LOCALITYNAME: "2.5.4.7",
  ST: "2.5.4.8",
  S: "2.5.4.8",
  STATEORPROVINCENAME: "2.5.4.8",
  STREET: "2.5.4.9",
  STREETADDRESS: "2.5.4.9",
  O: "2.5.4.10",
  ORGANIZATIONNAME: "2.5.4.10",
  OU: "2.5.4.11",
  ORGANIZATIONALUNITNAME: "2.5.4.11",
  T: "2.5.4.12",
  TITLE: "2.5.4.12",
  POSTALCODE: "2.5.4.17",
  GIVENNAME: "2.5.4.42",
  G: "2.5.4.42",
  GN: "2.5.4.42",
  I: "2.5.4.43",
  INITIALS: "2.5.4.43",
  DNQUALIFIER: "2.5.4.46",
  PSEUDONYM: "2.5.4.65",
  ORGANIZATIONIDENTIFIER: "2.5.4.97",
  E: "1.2.840.113549.1.9.1",
  EMAIL: "1.2.840.113549.1.9.1",
  EMAILADDRESS: "1.2.840.113549.1.9.1",
  DC: "0.9.2342.19200300.100.1.25",
  UID: "0.9.2342.19200300.100.1.1",
};

/** A keyId as written: its serial and its issuer DN. */
export interface KeyId {
  serial: string;
  issuer: string;
}

/** The parts of `SN=<serial>,CA=<issuer DN>`; `undefined` when the keyId has another form. */
export function parseKeyId(keyId: string): KeyId | undefined {
  const match = KEY_ID.exec(keyId.trim());
  return match ? { serial: match[1], issuer: match[2] } : undefined;
}

/**
 * Whether a keyId's serial names the certificate's (lower-case hex): as a hex number in any case
 * (the standard's form) or, when it has only decimal digits, as a decimal one (what some
 * libraries write).
 */
export function sameSerial(written: string, serial: string): boolean {
  const actual = BigInt(`0x${serial}`);
  return BigInt(`0x${written}`) === actual ||
    (/^[0-9]+$/.test(written) && BigInt(written) === actual);
}

/** Whether a keyId names this certificate: its serial and its issuer. */
export function namesCertificate(keyId: KeyId, certificate: CertificateInfo): boolean {
  return sameSerial(keyId.serial, certificate.serial) &&
    sameIssuer(keyId.issuer, certificate);
}

/** Whether a DN as a keyId writes it is the certificate's issuer, compared canonically. */
export function sameIssuer(written: string, certificate: CertificateInfo): boolean {
  const parsed = parseDn(written);
  if (!parsed) return false;
  // toJSON() names each attribute as @peculiar/x509 does (CN, O, E, SN for surname ...) or by
  // its OID: the same table resolves both.
  const actual: string[] = [];
  for (const rdn of certificate.cert.issuerName.toJSON()) {
    for (const [type, values] of Object.entries(rdn)) {
      const oid = attributeOid(type);
      for (const value of values) actual.push(canonical(oid ?? type, String(value)));
    }
  }
  return sameMembers(parsed, actual);
}

function sameMembers(a: string[], b: string[]): boolean {
  if (a.length !== b.length) return false;
  const left = [...a].sort();
  const right = [...b].sort();
  return left.every((value, i) => value === right[i]);
}

/** One attribute as `<oid>=<value>`: value trimmed, inner white space folded, case ignored. */
function canonical(oid: string, value: string): string {
  return `${oid}=${value.normalize("NFKC").trim().replace(/\s+/g, " ").toLowerCase()}`;
}

/** The tokens of a DN: an escaped character, a quoted string (RFC 1779), any other character. */
const DN_TOKEN = /\\[\s\S]|"(?:\\[\s\S]|[^"\\])*"?|[\s\S]/g;

/** `text` split at each `separator` that no backslash escapes and no quotes enclose. */
function splitUnescaped(text: string, separator: string): string[] {
  const parts = [""];
  for (const [token] of text.matchAll(DN_TOKEN)) {
    if (token === separator) parts.push("");
    else parts[parts.length - 1] += token;
  }
  return parts;
}

/** A part percent-decoded (`%20`); left as written when it is no valid percent-encoding. */
function percentDecoded(part: string): string {
  if (!part.includes("%")) return part;
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/**
 * The attributes of a DN as canonical `<oid>=<value>` strings, in any order; `undefined` when a
 * part is no `type=value`. RDNs split at unescaped `,` (multi-valued ones at `+`) before each
 * part is percent-decoded, so that an encoded comma stays inside its value.
 */
export function parseDn(dn: string): string[] | undefined {
  const attributes: string[] = [];
  for (const rdn of splitUnescaped(dn, ",")) {
    if (rdn.trim() === "") continue;
    for (const part of splitUnescaped(rdn, "+")) {
      const pair = percentDecoded(part);
      const equals = pair.indexOf("=");
      if (equals <= 0) return undefined;
      const oid = attributeOid(pair.slice(0, equals).trim());
      const value = attributeValue(pair.slice(equals + 1).trim());
      if (oid === undefined || value === undefined) return undefined;
      attributes.push(canonical(oid, value));
    }
  }
  return attributes.length > 0 ? attributes : undefined;
}

/** An attribute type's OID: a dotted OID (also `OID.` prefixed) or a name libraries write. */
function attributeOid(type: string): string | undefined {
  const dotted = type.replace(/^oid\./i, "");
  if (/^[0-9]+(\.[0-9]+)+$/.test(dotted)) return dotted;
  return ATTRIBUTES[type.toUpperCase()];
}

/**
 * An attribute value unescaped: `#<hex>` is the BER of a string (RFC 4514, how Java writes an
 * attribute it has no name for), `"..."` a quoted value (RFC 1779), `\,` and `\2C` escapes.
 */
function attributeValue(value: string): string | undefined {
  if (value.startsWith("#")) return berString(value.slice(1));
  const quoted = /^"(.*)"$/s.exec(value);
  const text = quoted ? quoted[1] : value;
  const bytes: number[] = [];
  const encoder = new TextEncoder();
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "\\" && /^[0-9A-Fa-f]{2}$/.test(text.slice(i + 1, i + 3))) {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      const ch = text[i] === "\\" && i + 1 < text.length ? text[++i] : text[i];
      bytes.push(...encoder.encode(ch));
    }
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(new Uint8Array(bytes));
  } catch {
    return undefined;
  }
}

/** Tags of the ASN.1 string types a DN uses, with how their bytes read. */
const BER_STRINGS: Record<number, string> = {
  0x0c: "utf-8", // UTF8String
  0x13: "latin1", // PrintableString
  0x14: "latin1", // TeletexString (T61), read as Latin-1
  0x16: "latin1", // IA5String
  0x1e: "utf-16be", // BMPString
};

/** The text of a hex-encoded BER string (tag, length, bytes); `undefined` for anything else. */
function berString(hex: string): string | undefined {
  if (!/^([0-9A-Fa-f]{2})+$/.test(hex)) return undefined;
  const bytes = Uint8Array.from(hex.match(/../g)!, (pair) => parseInt(pair, 16));
  const encoding = BER_STRINGS[bytes[0]];
  if (encoding === undefined || bytes.length < 2) return undefined;
  let length = bytes[1];
  let start = 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0 || count > 2) return undefined;
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + (bytes[2 + i] ?? 0);
    start = 2 + count;
  }
  if (start + length !== bytes.length) return undefined;
  const body = bytes.subarray(start);
  if (encoding === "utf-16be") {
    let text = "";
    for (let i = 0; i + 1 < body.length; i += 2) {
      text += String.fromCharCode(body[i] * 256 + body[i + 1]);
    }
    return text;
  }
  return new TextDecoder(encoding).decode(body);
}
