/**
 * Calendar days of the bank's time zone (IANA name, for example Asia/Tbilisi): where a day starts
 * and ends as instants, with daylight-saving changes taken into account. Consent frequency counts
 * per such day.
 */

/** One calendar day: its label and the instants it spans. */
export interface BankDay {
  /** `YYYY-MM-DD`. */
  label: string;
  /** First millisecond of the day (epoch milliseconds). */
  start: number;
  /** First millisecond of the next day. */
  end: number;
}

/** The days of one time zone. */
export interface BankCalendar {
  /** Yesterday, today and tomorrow around `now` (cached until the day changes). */
  around(now: number): BankDay[];
  /** Start of the day `YYYY-MM-DD`. */
  startOf(date: string): number;
}

const DAY = 86_400_000;

let canonicalZones: Set<string> | undefined;

/**
 * True when `timeZone` is a time zone name this runtime knows. A canonical IANA name is looked up
 * in the runtime's list; only another name (an alias such as UTC or Europe/Kiev) builds a formatter,
 * whose first construction loads the time zone data (some 20-60 ms at start-up otherwise).
 */
export function isTimeZone(timeZone: string): boolean {
  canonicalZones ??= new Set(Intl.supportedValuesOf("timeZone"));
  if (canonicalZones.has(timeZone)) return true;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone });
    return true;
  } catch {
    return false;
  }
}

function label(utcMidnight: number): string {
  return new Date(utcMidnight).toISOString().slice(0, 10);
}

/** The wall-clock time at an instant in a time zone, read as if it were UTC (epoch milliseconds). */
export type WallClock = (instant: number) => number;

/**
 * The wall clock of `timeZone`. Through `Temporal` where the runtime has it: its first use in a
 * fresh process took about 1 ms, where an `Intl.DateTimeFormat`'s first construction loads ICU's
 * time zone data (12 to 17 ms, paid by a cold start's first request). Elsewhere through a
 * formatter, made on first use and reused, so that a policy naming a time zone does not load the
 * data at start-up.
 */
export function wallClockOf(
  timeZone: string,
  temporal: boolean = typeof Temporal !== "undefined",
): WallClock {
  if (temporal) {
    return (instant) => {
      const wall = Temporal.Instant.fromEpochMilliseconds(instant).toZonedDateTimeISO(timeZone);
      return Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second);
    };
  }
  let format: Intl.DateTimeFormat | undefined;
  return (instant) => {
    format ??= new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    const parts: Record<string, number> = {};
    for (const part of format.formatToParts(instant)) {
      if (part.type !== "literal") parts[part.type] = Number(part.value);
    }
    return Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second);
  };
}

/** The calendar of a time zone (built once; its wall clock is read on first use). */
export function bankCalendar(timeZone: string, wallClock = wallClockOf(timeZone)): BankCalendar {
  function offset(instant: number): number {
    return wallClock(instant) - Math.floor(instant / 1000) * 1000;
  }

  /**
   * The first instant of the day whose wall-clock midnight is `utcMidnight` read as UTC: the
   * earlier midnight where the clocks go back over it, and the end of the gap where they go
   * forward over it (America/Santiago's 2026-09-06 began at 01:00).
   */
  function start(utcMidnight: number): number {
    const first = offset(utcMidnight);
    const second = offset(utcMidnight - first);
    const [early, late] = [utcMidnight - first, utcMidnight - second].sort((a, b) => a - b);
    if (wallClock(early) === utcMidnight) return early;
    if (wallClock(late) === utcMidnight) return late;
    // Midnight fell in a gap: the first whole second whose wall clock is past it.
    let [before, after] = [early / 1000, late / 1000];
    while (after - before > 1) {
      const middle = Math.floor((before + after) / 2);
      if (wallClock(middle * 1000) < utcMidnight) before = middle;
      else after = middle;
    }
    return after * 1000;
  }

  let cached: { from: number; to: number; days: BankDay[] } | undefined;
  return {
    around(now) {
      if (cached && now >= cached.from && now < cached.to) return cached.days;
      const wall = wallClock(now);
      const today = wall - (((wall % DAY) + DAY) % DAY);
      const days = [today - DAY, today, today + DAY].map((midnight) => ({
        label: label(midnight),
        start: start(midnight),
        end: start(midnight + DAY),
      }));
      cached = { from: days[1].start, to: days[1].end, days };
      return days;
    },
    startOf(date) {
      return start(Date.parse(`${date}T00:00:00Z`));
    },
  };
}
