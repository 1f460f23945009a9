/**
 * Resource ids in paths and the Consent-ID header: a bounded length and a character set that
 * cannot change the meaning of a path (no slashes, percent signs, dot segments or controls).
 */

/** The characters of an id: none that could change a path. */
export const SAFE_ID = /^[A-Za-z0-9._~-]+$/;

/** A UUID in its canonical 8-4-4-4-12 hexadecimal form (any version, either case). */
export const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** Problem with an id, as the end of a sentence ("must ..."), or `undefined` when it is fine. */
export function idProblem(value: string, maxLength: number): string | undefined {
  if (value.length === 0) return "must not be empty";
  if (value.length > maxLength) return `must have at most ${maxLength} characters`;
  if (!SAFE_ID.test(value) || /^\.+$/.test(value)) {
    return 'must consist of the characters A-Z a-z 0-9 . _ ~ - and must not be "." or ".."';
  }
  return undefined;
}
