/**
 * The consent rules of the interface document that depend on time or on other consents.
 *
 * - validUntil is the last valid day, inclusive; `9999-12-31` (the maximum) or anything beyond
 *   now + 180 days is shortened to now + 180 days, and reads show the adjusted date.
 * - A consent whose last valid day has passed reads as `expired`.
 * - When a recurring consent is authorised, the same PSU's earlier valid recurring consents
 *   expire automatically.
 * - `lastActionDate` is the day of the last change of status, the day after validUntil for a
 *   consent that expired by date.
 */
import { addDays, isoDate } from "./dates.ts";
import type { Consent, ConsentStatus, SandboxState } from "./state.ts";

/** Longest validity the bank grants, in days from now. */
export const MAX_VALIDITY_DAYS = 180;

/** The validUntil the bank stores for a requested one. */
export function adjustValidUntil(requested: string, now: Date): string {
  const max = isoDate(addDays(now, MAX_VALIDITY_DAYS));
  return requested === "9999-12-31" || requested > max ? max : requested;
}

/** The status a consent reads with at `now`: stored status, or `expired` past validUntil. */
export function effectiveStatus(consent: Consent, now: Date): ConsentStatus {
  const open = consent.status === "received" || consent.status === "valid";
  return open && isoDate(now) > consent.validUntil ? "expired" : consent.status;
}

/** Moves the consent to `status` today. */
export function changeStatus(consent: Consent, options: { status: ConsentStatus; now: Date }) {
  consent.status = options.status;
  consent.lastActionDate = isoDate(options.now);
}

/** The consent's `lastActionDate` as read at `now`. */
export function lastActionDate(consent: Consent, now: Date): string {
  if (effectiveStatus(consent, now) !== "expired" || consent.status === "expired") {
    return consent.lastActionDate;
  }
  const expiredOn = isoDate(addDays(new Date(`${consent.validUntil}T00:00:00Z`), 1));
  return expiredOn > consent.lastActionDate ? expiredOn : consent.lastActionDate;
}

/** Expires the PSU's valid recurring consents created before `consent` (now authorised). */
export function expireEarlierRecurring(state: SandboxState, consent: Consent) {
  if (!consent.recurringIndicator || !consent.psuId) return;
  for (const other of state.consents.values()) {
    if (other === consent) return;
    const same = other.psuId === consent.psuId && other.recurringIndicator;
    if (same && effectiveStatus(other, state.now()) === "valid") {
      changeStatus(other, { status: "expired", now: state.now() });
    }
  }
}
