/**
 * The SCA steps of an authorisation, shared by the interface (POST and PUT bodies), the SCA page
 * and the sandbox controls: identify the PSU, authenticate with a password, select a method,
 * authorise with an OTP; then `finalised` or `failed`, both final.
 *
 * The OTP is 123456 once a method is chosen (a challenge was sent). A code sent before any method
 * was chosen is taken as it is: a shortcut for quick tests, as the sandbox always allowed. The
 * test user PSU-SCA-FAIL never passes; the third wrong OTP fails the authorisation. With the
 * setting `redirectConfirmation`, a right OTP on the SCA page leaves the authorisation
 * `unconfirmed` until the TPP sends the confirmation code the redirect carried.
 */
import { SandboxError } from "./errors.ts";
import { findScaMethod, SCA_METHODS } from "./sca_methods.ts";
import type { Authorisation, SandboxState, ScaStatus } from "./state.ts";
import { behaviourOf, SANDBOX_OTP } from "./test_users.ts";

/** Wrong OTPs after which an authorisation fails. */
export const MAX_OTP_ATTEMPTS = 3;

/** The result of an OTP check. */
export type OtpResult = { ok: true } | { ok: false; attemptsLeft: number };

const FINAL: ScaStatus[] = ["finalised", "failed"];

/** Whether the authorisation reached a final status. */
export function isFinal(auth: Authorisation): boolean {
  return FINAL.includes(auth.scaStatus);
}

/** Throws 409 STATUS_INVALID when the authorisation is final. */
export function assertOpen(auth: Authorisation) {
  if (!isFinal(auth)) return;
  throw new SandboxError(409, "STATUS_INVALID", {
    text: `Authorisation "${auth.id}" is already ${auth.scaStatus}`,
    path: "authorisationId",
  });
}

/**
 * Identifies the PSU (an empty update, or the first request with a PSU-ID). In the decoupled
 * approach this sends the push to the PSU's app, which answers after the configured delay.
 */
export function identify(state: SandboxState, auth: Authorisation, psuId: string | undefined) {
  auth.psuId = psuId ?? auth.psuId;
  if (auth.scaStatus === "received") auth.scaStatus = "psuIdentified";
  if (auth.approach === "DECOUPLED" && auth.decoupledDueAt === undefined) {
    auth.decoupledDueAt = state.now().getTime() + state.settings.decoupledDelayMs;
    state.pendingDecoupled.add(auth);
  }
}

/**
 * Authenticates the PSU with the first factor. The sandbox checks no passwords, only that there
 * is one and that it is known whose it is.
 */
export function authenticate(
  auth: Authorisation,
  options: { psuId: string | undefined; password: string },
) {
  const psuId = options.psuId ?? auth.psuId;
  if (!psuId) {
    throw new SandboxError(400, "FORMAT_ERROR", {
      text: 'Header "PSU-ID" is required to authenticate the PSU with a password',
      path: "PSU-ID",
    });
  }
  if (options.password === "") {
    throw new SandboxError(401, "PSU_CREDENTIALS_INVALID", {
      text: "The password is empty",
      path: "psuData.password",
    });
  }
  auth.psuId = psuId;
  auth.scaStatus = "psuAuthenticated";
}

/** Chooses the SCA method (the challenge is sent); an unknown id is 400 SCA_METHOD_UNKNOWN. */
export function selectMethod(auth: Authorisation, methodId: string) {
  if (!findScaMethod(methodId)) {
    const known = SCA_METHODS.map((m) => `"${m.authenticationMethodId}"`).join(", ");
    throw new SandboxError(400, "SCA_METHOD_UNKNOWN", {
      text: `Authentication method "${methodId}" is unknown; the methods are ${known}`,
      path: "authenticationMethodId",
    });
  }
  auth.chosenMethodId = methodId;
  auth.scaStatus = "scaMethodSelected";
}

/**
 * Checks an OTP (or a confirmation code): right, the authorisation is finalised; wrong, the count
 * goes up and the third wrong one fails the authorisation.
 */
export function authorise(
  state: SandboxState,
  auth: Authorisation,
  otp: string,
  options: { confirmLater?: boolean } = {},
): OtpResult {
  const failsAlways = behaviourOf(auth.psuId) === "failsSca";
  const right = !failsAlways && (auth.chosenMethodId === undefined || otp === SANDBOX_OTP);
  if (right) {
    if (options.confirmLater) leaveUnconfirmed(auth);
    else finalise(state, auth);
    return { ok: true };
  }
  auth.failedOtps += 1;
  const attemptsLeft = MAX_OTP_ATTEMPTS - auth.failedOtps;
  if (attemptsLeft <= 0) fail(state, auth);
  return { ok: false, attemptsLeft: Math.max(0, attemptsLeft) };
}

/** Whether the authorisation waits for the TPP's confirmation code. */
export function awaitsConfirmation(auth: Authorisation): boolean {
  return auth.scaStatus === "unconfirmed";
}

/** SCA is done, the TPP confirms: `unconfirmed`, with a fresh confirmation code. */
export function leaveUnconfirmed(auth: Authorisation) {
  if (isFinal(auth)) return;
  auth.scaStatus = "unconfirmed";
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  auth.confirmationCode = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The TPP's confirmation of an `unconfirmed` authorisation: the right code finalises it, a wrong
 * one fails it (the standard's confirmation answers only `finalised` or `failed`).
 */
export function confirm(state: SandboxState, auth: Authorisation, code: string) {
  if (code === auth.confirmationCode) finalise(state, auth);
  else fail(state, auth);
}

/** The 401 PSU_CREDENTIALS_INVALID of a wrong OTP. */
export function wrongOtp(result: { attemptsLeft: number }, path: string): SandboxError {
  const text = result.attemptsLeft > 0
    ? `The one-time password is wrong; ${result.attemptsLeft} attempt${
      result.attemptsLeft === 1 ? "" : "s"
    } left`
    : "The one-time password is wrong for the third time; the authorisation has failed";
  return new SandboxError(401, "PSU_CREDENTIALS_INVALID", { text, path });
}

/** Finalises the authorisation (the resource learns of it). */
export function finalise(state: SandboxState, auth: Authorisation) {
  if (isFinal(auth)) return;
  auth.scaStatus = "finalised";
  state.pendingDecoupled.delete(auth);
  auth.host.finalised(auth);
}

/** Fails the authorisation (the resource learns of it). */
export function fail(state: SandboxState, auth: Authorisation) {
  if (isFinal(auth)) return;
  auth.scaStatus = "failed";
  state.pendingDecoupled.delete(auth);
  auth.host.failed(auth);
}

/** Completes every decoupled authorisation whose PSU app has answered by now. */
export function settleDecoupled(state: SandboxState) {
  if (state.pendingDecoupled.size === 0) return;
  const now = state.now().getTime();
  for (const auth of [...state.pendingDecoupled]) {
    if (auth.decoupledDueAt === undefined || auth.decoupledDueAt > now) continue;
    if (behaviourOf(auth.psuId) === "failsSca") fail(state, auth);
    else finalise(state, auth);
  }
}
