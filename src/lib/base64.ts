/**
 * Base64 text to bytes with the runtime's own decoder (`Uint8Array.fromBase64`): `atob` and a
 * byte copy through `Uint8Array.from(text, callback)` took about 250 us for a JWS protected header
 * that carries its certificate (x5c), this about 4 (a scratch loop over a 3,000-character header).
 */

/**
 * The bytes of base64 or base64url text, padding optional and ASCII whitespace skipped, as `atob`
 * reads it; text mixing both alphabets is read with either's characters. Throws a SyntaxError
 * when it is not base64.
 */
export function base64Bytes(text: string): Uint8Array<ArrayBuffer> {
  const url = text.includes("-") || text.includes("_");
  const standard = text.includes("+") || text.includes("/");
  if (url && standard) text = text.replace(/-/g, "+").replace(/_/g, "/");
  return Uint8Array.fromBase64(text, { alphabet: url && !standard ? "base64url" : "base64" });
}
