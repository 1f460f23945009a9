/**
 * Calendar helpers of the sandbox: ISO dates (`YYYY-MM-DD`) in UTC, compared as strings.
 */

const DAY_MS = 24 * 60 * 60 * 1000;

/** The UTC calendar date of an instant, as `YYYY-MM-DD`. */
export function isoDate(instant: Date): string {
  return instant.toISOString().slice(0, 10);
}

/** The instant `days` days after `instant`. */
export function addDays(instant: Date, days: number): Date {
  return new Date(instant.getTime() + days * DAY_MS);
}

/** Whether a string is a real calendar date written `YYYY-MM-DD`. */
export function isIsoDate(value: unknown): value is string {
  if (typeof value !== "string" || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const parsed = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && isoDate(parsed) === value;
}
