/**
 * The TPP's transport certificate as the TLS terminator forwards it in a header: nginx
 * URL-encoded PEM (`$ssl_client_escaped_cert`), Envoy `X-Forwarded-Client-Cert` (`Cert="..."`),
 * or RFC 9440 `Client-Cert: :<base64 DER>:`. The terminator must overwrite the header, so that
 * a client cannot send its own.
 */
import { type HeaderLookup } from "../lib/header_pairs.ts";
import { GatewayError } from "../psd2/errors.ts";
import { BoundedCache } from "./lru.ts";

/**
 * URL-encoded certificates already decoded: a TPP's every request carries the same one (about
 * 2,000 characters, whose `decodeURIComponent` was the largest of the gateway's own functions on
 * the production example's read). Only decodable values are kept, at most 1,000.
 */
const decoded = new BoundedCache<string, string>(1000);

/** The header forms the gateway reads. */
export const CLIENT_CERT_FORMS = ["nginx", "envoy", "rfc9440"] as const;
export type ClientCertForm = typeof CLIENT_CERT_FORMS[number];

/** The header each form uses unless the policy names another. */
export const DEFAULT_HEADER: Record<ClientCertForm, string> = {
  nginx: "X-SSL-Client-Cert",
  envoy: "X-Forwarded-Client-Cert",
  rfc9440: "Client-Cert",
};

function invalid(header: string, expected: string): GatewayError {
  return new GatewayError(401, "CERTIFICATE_INVALID", `Header "${header}" must carry ${expected}`, {
    path: header,
  });
}

/** Splits on `separator` outside double quotes. */
function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let current = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === "\\" && quoted && i + 1 < text.length) {
      current += ch + text[++i];
    } else if (ch === '"') {
      quoted = !quoted;
      current += ch;
    } else if (ch === separator && !quoted) {
      parts.push(current);
      current = "";
    } else {
      current += ch;
    }
  }
  parts.push(current);
  return parts;
}

/** The `Cert` of the first element of an XFCC value (the one about the TPP's own connection). */
function envoyCert(value: string, header: string): string | undefined {
  const [first] = splitOutsideQuotes(value, ",");
  for (const pair of splitOutsideQuotes(first, ";")) {
    const eq = pair.indexOf("=");
    if (eq < 0) continue;
    if (pair.slice(0, eq).trim().toLowerCase() !== "cert") continue;
    let v = pair.slice(eq + 1).trim();
    if (v.startsWith('"') && v.endsWith('"') && v.length >= 2) v = v.slice(1, -1);
    return decode(v, header, 'Cert="<URL-encoded PEM>"');
  }
  return undefined;
}

function decode(value: string, header: string, expected: string): string {
  const known = decoded.get(value);
  if (known !== undefined) return known;
  let text: string;
  try {
    text = decodeURIComponent(value);
  } catch {
    throw invalid(header, expected);
  }
  decoded.set(value, text);
  return text;
}

/**
 * The certificate text (PEM or base64 DER) in the request's header, `undefined` when the header
 * is absent; a malformed header is 401 CERTIFICATE_INVALID.
 */
export function clientCertificate(
  headers: HeaderLookup,
  form: ClientCertForm,
  header: string,
): string | undefined {
  const value = headers.get(header)?.trim();
  if (!value) return undefined;
  switch (form) {
    case "nginx":
      return decode(value, header, "a URL-encoded PEM certificate");
    case "envoy": {
      const cert = envoyCert(value, header);
      if (cert === undefined) throw invalid(header, 'Cert="<URL-encoded PEM>"');
      return cert;
    }
    case "rfc9440": {
      const match = /^:([A-Za-z0-9+/]+={0,2}):$/.exec(value);
      if (!match) throw invalid(header, "a byte sequence :<base64 DER>: (RFC 9440)");
      return match[1];
    }
  }
}
