/**
 * Sandbox controls under `/sandbox/`: outside the interface paths, so the gateway never routes
 * to them; they exist only where the sandbox runs (127.0.0.1 and SANDBOX_PORT by default).
 *
 * - `POST /sandbox/reset`: forget every payment, consent, order and logged request; clock back.
 * - `GET|PUT /sandbox/clock`: read or move the clock (`{"now": "2026-01-01T10:00:00Z"}`,
 *   `{"advanceSeconds": 86400}`, `{"now": null}` for the real time).
 * - `GET /sandbox/requests?limit=N`: the last requests received, newest first.
 * - `GET|PUT /sandbox/settings`: `{"decoupledDelayMs": 5000, "redirectConfirmation": false}`.
 * - `POST /sandbox/authorisations/{authorisationId}/approve|deny`: the PSU's answer, now.
 * - `GET /sandbox/users`: the test users.
 *
 * None is served on the SCA pages' origin, and none takes a change from another site's page
 * (control_guard.ts).
 */
import type { Hono } from "hono";
import { guardControls } from "./control_guard.ts";
import { formatError, resourceUnknown } from "./errors.ts";
import { readJsonObject } from "./request.ts";
import { assertOpen, fail, finalise } from "./sca_flow.ts";
import { resetState, type SandboxState } from "./state.ts";
import { SANDBOX_OTP, TEST_USERS } from "./test_users.ts";

/** Largest clock move or decoupled delay accepted, in milliseconds (about 100 years). */
const MAX_MS = 100 * 366 * 24 * 60 * 60 * 1000;

/** Mounts the controls on the app. */
export function mountControls(app: Hono, state: SandboxState) {
  app.use("/sandbox/*", guardControls(state));
  app.post("/sandbox/reset", (c) => {
    resetState(state);
    return c.body(null, 204);
  });
  app.get("/sandbox/clock", (c) => c.json(clockView(state)));
  app.put("/sandbox/clock", async (c) => {
    const body = await readJsonObject(c);
    if ("now" in body) {
      if (body.now === null) state.clock.set(undefined);
      else state.clock.set(instantOf(body.now));
    } else if ("advanceSeconds" in body) {
      const seconds = body.advanceSeconds;
      if (
        typeof seconds !== "number" || !Number.isFinite(seconds) ||
        Math.abs(seconds) * 1000 > MAX_MS
      ) {
        throw formatError('Field "advanceSeconds" must be a number of seconds', "advanceSeconds");
      }
      state.clock.advance(seconds * 1000);
    } else {
      throw formatError('The body must carry "now" or "advanceSeconds"');
    }
    return c.json(clockView(state));
  });
  app.get("/sandbox/requests", (c) => {
    const raw = c.req.query("limit") ?? "50";
    const limit = /^\d{1,4}$/.test(raw) ? Number(raw) : Number.NaN;
    if (!(limit >= 1)) {
      throw formatError('Query parameter "limit" must be a positive integer', "limit");
    }
    return c.json({ requests: state.requests.slice(-limit).reverse() });
  });
  app.get("/sandbox/settings", (c) => c.json(settingsView(state)));
  app.put("/sandbox/settings", async (c) => {
    const body = await readJsonObject(c);
    const delay = body.decoupledDelayMs;
    const confirmation = body.redirectConfirmation;
    if (delay === undefined && confirmation === undefined) {
      throw formatError('Give "decoupledDelayMs" or "redirectConfirmation"');
    }
    if (
      delay !== undefined &&
      (!Number.isInteger(delay) || (delay as number) < 0 || (delay as number) > MAX_MS)
    ) {
      throw formatError('Field "decoupledDelayMs" must be an integer >= 0', "decoupledDelayMs");
    }
    if (confirmation !== undefined && typeof confirmation !== "boolean") {
      throw formatError(
        'Field "redirectConfirmation" must be true or false',
        "redirectConfirmation",
      );
    }
    if (typeof delay === "number") state.settings.decoupledDelayMs = delay;
    if (typeof confirmation === "boolean") state.settings.redirectConfirmation = confirmation;
    return c.json(settingsView(state));
  });
  app.post("/sandbox/authorisations/:authorisationId/:answer{approve|deny}", (c) => {
    const auth = state.authorisations.get(c.req.param("authorisationId"));
    if (!auth) throw resourceUnknown("Authorisation", "authorisationId");
    assertOpen(auth);
    if (c.req.param("answer") === "approve") finalise(state, auth);
    else fail(state, auth);
    return c.json({ authorisationId: auth.id, scaStatus: auth.scaStatus });
  });
  app.get("/sandbox/users", (c) => {
    return c.json({ password: "any non-empty password", otp: SANDBOX_OTP, users: TEST_USERS });
  });
}

function clockView(state: SandboxState) {
  return { now: state.now().toISOString(), offsetSeconds: state.clock.offsetMs() / 1000 };
}

function settingsView(state: SandboxState) {
  return {
    decoupledDelayMs: state.settings.decoupledDelayMs,
    redirectConfirmation: state.settings.redirectConfirmation === true,
    scaOrigin: state.settings.scaOrigin(),
  };
}

function instantOf(value: unknown): Date {
  const instant = typeof value === "string" && /^\d{4}-\d{2}-\d{2}T/.test(value)
    ? new Date(value)
    : undefined;
  if (!instant || Number.isNaN(instant.getTime())) {
    throw formatError('Field "now" must be an ISO date-time like "2026-01-01T10:00:00Z"', "now");
  }
  return instant;
}
