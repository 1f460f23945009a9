import assert from "node:assert/strict";
import { bankCalendar, isTimeZone, wallClockOf } from "../../../src/lib/calendar.ts";

Deno.test("bankCalendar() starts the day at midnight of the bank's time zone", () => {
  const tbilisi = bankCalendar("Asia/Tbilisi");
  // 2026-03-10 21:00 UTC is already 2026-03-11 01:00 in Tbilisi (UTC+4).
  const [yesterday, today, tomorrow] = tbilisi.around(Date.parse("2026-03-10T21:00:00Z"));
  assert.equal(today.label, "2026-03-11");
  assert.equal(today.start, Date.parse("2026-03-10T20:00:00Z"));
  assert.equal(today.end, Date.parse("2026-03-11T20:00:00Z"));
  assert.equal(yesterday.label, "2026-03-10");
  assert.equal(tomorrow.start, today.end);
  assert.equal(tbilisi.startOf("2026-12-31"), Date.parse("2026-12-30T20:00:00Z"));
});

Deno.test("bankCalendar() knows a day of 23 hours when clocks go forward", () => {
  const berlin = bankCalendar("Europe/Berlin");
  const [, day] = berlin.around(Date.parse("2026-03-29T12:00:00Z"));
  assert.equal(day.start, Date.parse("2026-03-28T23:00:00Z"));
  assert.equal(day.end, Date.parse("2026-03-29T22:00:00Z"));
  assert.equal(day.end - day.start, 23 * 3_600_000);
});

Deno.test("isTimeZone() tells IANA names from anything else", () => {
  assert.equal(isTimeZone("Asia/Tbilisi"), true);
  assert.equal(isTimeZone("Mars/Olympus"), false);
});

/** What `run` returns, and how many `Intl.DateTimeFormat`s it constructed. */
function counting<T>(run: () => T): [T, number] {
  const original = Intl.DateTimeFormat;
  let built = 0;
  Intl.DateTimeFormat = new Proxy(original, {
    construct(target, args) {
      built++;
      return Reflect.construct(target, args);
    },
  });
  try {
    return [run(), built];
  } finally {
    Intl.DateTimeFormat = original;
  }
}

Deno.test("isTimeZone() and bankCalendar() build no formatter for a canonical name", () => {
  // The first construction loads the time zone data (12 to 17 ms of a cold start).
  const [, built] = counting(() => {
    assert.equal(isTimeZone("Asia/Tbilisi"), true);
    const calendar = bankCalendar("Asia/Tbilisi");
    calendar.around(Date.parse("2026-03-10T21:00:00Z"));
    calendar.startOf("2026-12-31");
  });
  assert.equal(built, 0, "a canonical name and a calendar read through Temporal need no formatter");
  const [, forAliases] = counting(() => {
    assert.equal(isTimeZone("UTC"), true);
    assert.equal(isTimeZone("europe/berlin"), true);
    assert.equal(isTimeZone("Mars/Olympus"), false);
  });
  assert.ok(forAliases > 0, "an alias is still known through a formatter");
});

Deno.test("a runtime without Temporal reads the calendar through one formatter", () => {
  const [calendar, made] = counting(() =>
    bankCalendar("Asia/Tbilisi", wallClockOf("Asia/Tbilisi", false))
  );
  assert.equal(made, 0, "none before the calendar is read");
  const [, read] = counting(() => {
    const [, today] = calendar.around(Date.parse("2026-03-10T21:00:00Z"));
    assert.equal(today.start, Date.parse("2026-03-10T20:00:00Z"));
    calendar.startOf("2026-12-31");
  });
  assert.equal(read, 1, "one formatter, made on first use and reused");
});

Deno.test("bankCalendar() agrees with Temporal's start of day, through either wall clock", () => {
  // Zones with changes at midnight (Santiago, Havana, Beirut), of half an hour (Lord Howe), at
  // 02:45 (Chatham), a day skipped (Apia, 2011-12-30), none (Tbilisi, Kolkata), and the usual ones.
  const zones = [
    "Europe/Berlin",
    "America/New_York",
    "America/Santiago",
    "America/Havana",
    "Asia/Beirut",
    "Australia/Lord_Howe",
    "Pacific/Chatham",
    "Pacific/Apia",
    "Asia/Tbilisi",
    "Asia/Kolkata",
  ];
  const windows = [
    [Date.parse("2011-12-25T00:00:00Z"), Date.parse("2012-01-08T00:00:00Z")],
    [Date.parse("2026-01-01T00:00:00Z"), Date.parse("2027-01-01T00:00:00Z")],
  ];
  const startOfDay = (label: string, zone: string) =>
    Temporal.PlainDate.from(label).toZonedDateTime(zone).epochMilliseconds;
  for (const zone of zones) {
    const temporal = wallClockOf(zone, true);
    const formatter = wallClockOf(zone, false);
    const calendars = [bankCalendar(zone, temporal), bankCalendar(zone, formatter)];
    for (const [from, to] of windows) {
      // A step of 97 minutes and 13 seconds drifts through every time of day.
      for (let instant = from; instant < to; instant += 5_833_000) {
        const at = `${zone} at ${new Date(instant).toISOString()}`;
        assert.equal(temporal(instant), formatter(instant), at);
      }
      for (let noon = from + 43_200_000; noon < to; noon += 86_400_000) {
        const at = `${zone} around ${new Date(noon).toISOString()}`;
        for (const calendar of calendars) {
          for (const day of calendar.around(noon)) {
            assert.equal(day.start, startOfDay(day.label, zone), `${at}: ${day.label}`);
          }
        }
      }
    }
  }
});

Deno.test("bankCalendar() starts a day at 01:00 where the clocks go forward at midnight", () => {
  // Santiago went from UTC-4 to UTC-3 at 2026-09-06 00:00 local time: the day began at 01:00.
  const santiago = bankCalendar("America/Santiago");
  const [, day] = santiago.around(Date.parse("2026-09-06T12:00:00Z"));
  assert.equal(day.label, "2026-09-06");
  assert.equal(day.start, Date.parse("2026-09-06T04:00:00Z"));
  assert.equal(day.end - day.start, 23 * 3_600_000);
});
