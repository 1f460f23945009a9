/**
 * Calendar dates of the interface (ISO 8601 `YYYY-MM-DD`) and "not in the past", judged so that
 * no TPP anywhere on earth is refused a date that is still today for its PSU.
 */

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Whether the value is a real calendar date in `YYYY-MM-DD` form. */
export function isIsoDate(value: string): boolean {
  const match = ISO_DATE.exec(value);
  if (!match) return false;
  const [, y, m, d] = match.map(Number);
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

/** The earliest calendar date that is "today" somewhere (UTC-12), as `YYYY-MM-DD`. */
export function earliestToday(nowMs: number): string {
  return new Date(nowMs - 12 * 3600_000).toISOString().slice(0, 10);
}
