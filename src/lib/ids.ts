/**
 * Resource ids in paths and the Consent-ID header: a bounded length and a character set that
 * cannot change the meaning of a path (no slashes, percent signs, dot segments or controls).
 */

const SAFE = /^[A-Za-z0-9._~-]+$/;

/** Problem with an id, as the end of a sentence ("must ..."), or `undefined` when it is fine. */
export function idProblem(value: string, maxLength: number): string | undefined {
  if (value.length === 0) return "must not be empty";
  if (value.length > maxLength) return `must have at most ${maxLength} characters`;
  if (!SAFE.test(value) || /^\.+$/.test(value)) {
    return 'must consist of the characters A-Z a-z 0-9 . _ ~ - and must not be "." or ".."';
  }
  return undefined;
}
