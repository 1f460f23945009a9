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
  // Not Date.UTC: it reads years 0-99 as 1900-1999, which refused "0099-12-31".
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];
  return days !== undefined && d >= 1 && d <= days;
}

/** The earliest calendar date that is "today" somewhere (UTC-12), as `YYYY-MM-DD`. */
export function earliestToday(nowMs: number): string {
  return new Date(nowMs - 12 * 3600_000).toISOString().slice(0, 10);
}
