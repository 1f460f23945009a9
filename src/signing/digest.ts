/**
 * The Digest header (RFC 3230 as the interface uses it): `SHA-256=<base64>` or `SHA-512=<base64>`
 * of the exact body bytes; an empty body has the hash of the empty byte string.
 */
import { formatError } from "../core/errors.ts";
import type { Bytes } from "../lib/body.ts";

/** Digest algorithms the gateway computes. */
export const DIGEST_ALGORITHMS = ["SHA-256", "SHA-512"] as const;
export type DigestAlgorithm = typeof DIGEST_ALGORITHMS[number];

function base64(bytes: ArrayBuffer): string {
  let binary = "";
  const view = new Uint8Array(bytes);
  for (let i = 0; i < view.length; i += 0x8000) {
    binary += String.fromCharCode(...view.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

/** The Digest header value of a body, for example `SHA-256=47DEQpj8...`. */
export async function digestOf(body: Bytes, algorithm: DigestAlgorithm = "SHA-256") {
  return `${algorithm}=${base64(await crypto.subtle.digest(algorithm, body))}`;
}

/**
 * Checks a Digest header value against the body: every listed algorithm must be allowed and
 * match; 400 FORMAT_ERROR naming the header otherwise.
 */
export async function checkDigest(
  value: string,
  body: Bytes,
  allowed: readonly DigestAlgorithm[] = DIGEST_ALGORITHMS,
): Promise<void> {
  const entries = value.split(",").map((e) => e.trim());
  for (const entry of entries) {
    const eq = entry.indexOf("=");
    const name = eq > 0 ? entry.slice(0, eq).toUpperCase() : "";
    const given = eq > 0 ? entry.slice(eq + 1) : "";
    if (!name || !/^[A-Za-z0-9+/]+={0,2}$/.test(given)) {
      throw formatError("Digest", 'Header "Digest" must look like SHA-256=<base64>');
    }
    const algorithm = allowed.find((a) => a === name);
    if (!algorithm) {
      throw formatError(
        "Digest",
        `Header "Digest" uses the unsupported algorithm "${name}"; supported: ${
          allowed.join(", ")
        }`,
      );
    }
    const expected = base64(await crypto.subtle.digest(algorithm, body));
    if (given !== expected) {
      throw formatError("Digest", `Header "Digest" does not match the request body (${algorithm})`);
    }
  }
}
