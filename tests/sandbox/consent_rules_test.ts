import assert from "node:assert/strict";
import {
  adjustValidUntil,
  changeStatus,
  effectiveStatus,
  expireEarlierRecurring,
  lastActionDate,
} from "../../src/sandbox/consent_rules.ts";
import { type Consent, createState } from "../../src/sandbox/state.ts";

const NOW = new Date("2025-07-01T23:30:00Z");
const SETTINGS = { scaOrigin: () => "http://localhost:1", decoupledDelayMs: 0 };

function consent(overrides: Partial<Consent>): Consent {
  return {
    id: crypto.randomUUID(),
    access: {},
    recurringIndicator: true,
    validUntil: "2025-12-01",
    frequencyPerDay: 4,
    combinedServiceIndicator: false,
    status: "valid",
    lastActionDate: "2025-06-01",
    tpp: { approach: "REDIRECT" },
    authorisations: new Map(),
    ...overrides,
  };
}

Deno.test("adjustValidUntil() caps at now + 180 days and keeps earlier dates", () => {
  assert.equal(adjustValidUntil("9999-12-31", NOW), "2025-12-28");
  assert.equal(adjustValidUntil("2025-12-29", NOW), "2025-12-28");
  assert.equal(adjustValidUntil("2025-12-28", NOW), "2025-12-28");
  assert.equal(adjustValidUntil("2025-08-01", NOW), "2025-08-01");
});

Deno.test("effectiveStatus() reads expired only after the last valid day", () => {
  assert.equal(effectiveStatus(consent({ validUntil: "2025-07-01" }), NOW), "valid");
  assert.equal(effectiveStatus(consent({ validUntil: "2025-06-30" }), NOW), "expired");
  assert.equal(
    effectiveStatus(consent({ validUntil: "2025-06-30", status: "received" }), NOW),
    "expired",
  );
  assert.equal(
    effectiveStatus(consent({ validUntil: "2025-06-30", status: "terminatedByTpp" }), NOW),
    "terminatedByTpp",
  );
});

Deno.test("expireEarlierRecurring() expires earlier recurring consents of the same PSU only", () => {
  const state = createState(() => NOW, SETTINGS);
  const earlier = consent({ psuId: "p" });
  const otherPsu = consent({ psuId: "q" });
  const oneOff = consent({ psuId: "p", recurringIndicator: false });
  const current = consent({ psuId: "p" });
  const later = consent({ psuId: "p" });
  for (const c of [earlier, otherPsu, oneOff, current, later]) state.consents.set(c.id, c);
  expireEarlierRecurring(state, current);
  assert.equal(earlier.status, "expired");
  assert.equal(earlier.lastActionDate, "2025-07-01", "expiry is an action on the consent");
  assert.equal(otherPsu.status, "valid");
  assert.equal(oneOff.status, "valid");
  assert.equal(current.status, "valid");
  assert.equal(later.status, "valid");
});

Deno.test("expireEarlierRecurring() does nothing for a one-off consent or one without PSU", () => {
  const state = createState(() => NOW, SETTINGS);
  const earlier = consent({ psuId: "p" });
  const oneOff = consent({ psuId: "p", recurringIndicator: false });
  const anonymous = consent({});
  for (const c of [earlier, oneOff, anonymous]) state.consents.set(c.id, c);
  expireEarlierRecurring(state, oneOff);
  expireEarlierRecurring(state, anonymous);
  assert.equal(earlier.status, "valid");
});

Deno.test("lastActionDate() is the day of the last status change, or the day after validUntil once expired by date", () => {
  const open = consent({ validUntil: "2025-12-01", lastActionDate: "2025-06-01" });
  assert.equal(lastActionDate(open, NOW), "2025-06-01");
  changeStatus(open, { status: "terminatedByTpp", now: NOW });
  assert.equal(open.status, "terminatedByTpp");
  assert.equal(lastActionDate(open, NOW), "2025-07-01");
  const lapsed = consent({ validUntil: "2025-06-20", lastActionDate: "2025-06-01" });
  assert.equal(lastActionDate(lapsed, NOW), "2025-06-21");
  const stored = consent({
    status: "expired",
    validUntil: "2025-06-20",
    lastActionDate: "2025-06-25",
  });
  assert.equal(lastActionDate(stored, NOW), "2025-06-25");
});
