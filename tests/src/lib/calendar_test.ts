import assert from "node:assert/strict";
import { bankCalendar, isTimeZone } from "../../../src/lib/calendar.ts";

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

Deno.test("isTimeZone() and bankCalendar() build no formatter before a calendar is read", () => {
  const original = Intl.DateTimeFormat;
  let built = 0;
  // Counts constructions: the first one loads the time zone data (20-60 ms of a cold start).
  Intl.DateTimeFormat = new Proxy(original, {
    construct(target, args) {
      built++;
      return Reflect.construct(target, args);
    },
  });
  try {
    assert.equal(isTimeZone("Asia/Tbilisi"), true);
    const calendar = bankCalendar("Asia/Tbilisi");
    assert.equal(built, 0, "a canonical name and an unread calendar need no formatter");
    assert.equal(isTimeZone("UTC"), true, "an alias is still known (through a formatter)");
    assert.equal(isTimeZone("europe/berlin"), true);
    assert.equal(isTimeZone("Mars/Olympus"), false);
    built = 0;
    calendar.around(Date.parse("2026-03-10T21:00:00Z"));
    calendar.startOf("2026-12-31");
    assert.equal(built, 1, "one formatter, made on first use and reused");
  } finally {
    Intl.DateTimeFormat = original;
  }
});
