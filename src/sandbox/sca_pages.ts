/**
 * The SCA page of the redirect approach, `GET|POST /sca/{token}` on the sandbox's own origin:
 * the summary of what is authorised, a login (any password), an OTP step (123456), Approve and
 * Deny. Approve finalises the authorisation and sends the browser to TPP-Redirect-URI; Deny (or a
 * third wrong OTP) fails it and sends the browser to TPP-Nok-Redirect-URI, or to TPP-Redirect-URI
 * with `error=access_denied` (`error=sca_failed`). With the setting `redirectConfirmation`,
 * Approve leaves the authorisation `unconfirmed` and the redirect carries a `confirmationCode`
 * for the TPP to confirm with. For a bank-offered consent the PSU picks the accounts to share.
 *
 * Every form carries a CSRF token bound to a session cookie (HttpOnly, SameSite=Lax); answers are
 * never cached, never framed and send no referrer.
 */
import type { Context, Hono } from "hono";
import { nameAccounts, offeredAccounts } from "./bank_offered.ts";
import {
  authenticate,
  authorise,
  awaitsConfirmation,
  fail,
  isFinal,
  selectMethod,
} from "./sca_flow.ts";
import { type PageContent, renderPage, styleSource } from "./sca_html.ts";
import { summaryRows } from "./sca_summary.ts";
import { type Lang, langOf, pickLanguage, type Texts, textsOf } from "./sca_texts.ts";
import type { Authorisation, PageSession, SandboxState } from "./state.ts";

const COOKIE = "sca_session";

/** Mounts the SCA page on the app. */
export function mountScaPages(app: Hono, state: SandboxState) {
  app.get("/sca/:token", (c) => {
    const auth = state.redirects.get(c.req.param("token"));
    const chosen = langOf(c.req.query("lang"));
    const lang = chosen ?? pickLanguage(c.req.header("accept-language"));
    if (!auth) return page({ status: 404, content: notFound(lang) });
    if (isDone(auth)) return page({ auth, content: closing(auth, lang) });
    let session = state.pageSessions.get(auth.redirectToken);
    let setCookie: string | undefined;
    if (!session || session.id !== cookie(c)) {
      session = { id: randomId(), csrf: randomId(), step: "login", lang };
      state.pageSessions.set(auth.redirectToken, session);
      setCookie = sessionCookie(state, session.id);
    }
    if (chosen) session.lang = chosen;
    const notice = session.notice;
    session.notice = undefined;
    const t = textsOf(session.lang);
    const step: PageContent["step"] = session.step === "login"
      ? { kind: "login", csrf: session.csrf, psuId: auth.psuId }
      : { kind: "otp", csrf: session.csrf, accounts: offeredAccounts(auth.host.subject) };
    const summary = summaryRows(auth.host.subject, t);
    const content = { lang: session.lang, t, title: titleOf(auth, t), summary, notice, step };
    return page({ auth, content, setCookie });
  });

  app.post("/sca/:token", async (c) => {
    const auth = state.redirects.get(c.req.param("token"));
    const fallback = pickLanguage(c.req.header("accept-language"));
    if (!auth) return page({ status: 404, content: notFound(fallback) });
    const session = state.pageSessions.get(auth.redirectToken);
    const form = await readForm(c);
    if (!session || session.id !== cookie(c) || !sameSecret(form.get("csrf"), session.csrf)) {
      const lang = session?.lang ?? fallback;
      const t = textsOf(lang);
      return page({ status: 403, auth, content: message({ lang, t, text: t.expiredForm }) });
    }
    if (isDone(auth)) return page({ auth, content: closing(auth, session.lang) });
    const t = textsOf(session.lang);
    const action = form.get("action");
    if (action === "deny") {
      fail(state, auth);
      return finish({ state, auth, session, error: "access_denied" });
    }
    if (session.step === "login" && action === "login") {
      const psuId = (form.get("psuId") ?? "").trim();
      const password = form.get("password") ?? "";
      if (psuId === "" || password === "") {
        session.notice = t.missingCredentials;
      } else {
        authenticate(auth, { psuId, password });
        selectMethod(auth, "sms-otp");
        session.step = "otp";
      }
    } else if (session.step === "otp" && action === "approve") {
      const subject = auth.host.subject;
      const chosen = form.getAll("account");
      if (offeredAccounts(subject) && chosen.length === 0) {
        session.notice = t.noAccountChosen;
        return redirect(c.req.param("token"));
      }
      const confirmLater = auth.approach === "REDIRECT" && state.settings.redirectConfirmation;
      const result = authorise(state, auth, (form.get("otp") ?? "").trim(), {
        confirmLater: confirmLater === true,
      });
      if (result.ok) {
        if (subject.kind === "consent" && offeredAccounts(subject)) {
          nameAccounts(subject.consent, chosen);
        }
        return finish({ state, auth, session });
      }
      if (result.attemptsLeft === 0) return finish({ state, auth, session, error: "sca_failed" });
      session.notice = t.wrongOtp(result.attemptsLeft);
    }
    // Post, redirect, get: the page itself shows the next step.
    return redirect(c.req.param("token"));
  });
}

/** Sends the browser back to the TPP once the authorisation is final. */
function finish(
  options: { state: SandboxState; auth: Authorisation; session: PageSession; error?: string },
): Promise<Response> | Response {
  const { state, auth, session, error } = options;
  state.pageSessions.delete(auth.redirectToken);
  const target = error ? nokTarget(auth, error) : okTarget(auth);
  if (!target) return page({ auth, content: closing(auth, session.lang) });
  return redirect(target);
}

/** Whether the page has nothing more to ask: the authorisation is final or awaits the TPP. */
function isDone(auth: Authorisation): boolean {
  return isFinal(auth) || awaitsConfirmation(auth);
}

/** TPP-Redirect-URI, with the `confirmationCode` when the TPP is to confirm. */
function okTarget(auth: Authorisation): string | undefined {
  if (!awaitsConfirmation(auth) || !auth.redirectUri) return auth.redirectUri;
  const url = URL.parse(auth.redirectUri);
  if (!url) return auth.redirectUri;
  url.searchParams.set("confirmationCode", auth.confirmationCode ?? "");
  return url.href;
}

/** TPP-Nok-Redirect-URI, else TPP-Redirect-URI with an `error` parameter. */
function nokTarget(auth: Authorisation, error: string): string | undefined {
  if (auth.nokRedirectUri) return auth.nokRedirectUri;
  const url = auth.redirectUri ? URL.parse(auth.redirectUri) : null;
  if (!url) return undefined;
  url.searchParams.set("error", error);
  return url.href;
}

function redirect(location: string): Response {
  return new Response(null, { status: 303, headers: { ...securityHeaders(), location } });
}

async function page(
  options: {
    status?: 200 | 403 | 404;
    auth?: Authorisation;
    content: PageContent;
    setCookie?: string;
  },
): Promise<Response> {
  const headers = new Headers(securityHeaders());
  headers.set("content-type", "text/html; charset=utf-8");
  headers.set("content-security-policy", await policy(options.auth));
  if (options.setCookie) headers.set("set-cookie", options.setCookie);
  return new Response(renderPage(options.content), { status: options.status ?? 200, headers });
}

function securityHeaders(): Record<string, string> {
  return {
    "cache-control": "no-store",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
  };
}

/**
 * The page's Content-Security-Policy. `form-action` names the TPP's origins too: a browser checks
 * the redirect that follows a form submission against it.
 */
async function policy(auth: Authorisation | undefined): Promise<string> {
  const origins = [auth?.redirectUri, auth?.nokRedirectUri]
    .map((uri) => (uri ? sourceOf(uri) : undefined))
    .filter((origin): origin is string => origin !== undefined);
  return [
    "default-src 'none'",
    `style-src ${await styleSource()}`,
    `form-action 'self' ${[...new Set(origins)].join(" ")}`.trim(),
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join("; ");
}

/** A host as a CSP source may name it: DNS labels, or an IP literal. */
const CSP_HOST =
  /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$|^\[[0-9a-f:.]+\]$/;

/**
 * The CSP source of a TPP's URI (`https://tpp.example:8443`), or `undefined` when it is not an
 * http(s) URL whose host is plain: the URL parser decodes `%3B` in a host to `;`, which would end
 * the directive and let the TPP's header add its own (`;sandbox`, `;report-uri ...`) to the page.
 */
export function sourceOf(uri: string): string | undefined {
  const url = URL.parse(uri);
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:")) return undefined;
  if (!CSP_HOST.test(url.hostname)) return undefined;
  return `${url.protocol}//${url.hostname}${url.port ? `:${url.port}` : ""}`;
}

function titleOf(auth: Authorisation, t: Texts): string {
  const kind = auth.host.subject.kind;
  return kind === "consent"
    ? t.titleConsent
    : kind === "cancellation"
    ? t.titleCancellation
    : t.titlePayment;
}

function closing(auth: Authorisation, lang: Lang): PageContent {
  const t = textsOf(lang);
  const outcome = auth.scaStatus === "failed" ? t.failed : t.finalised;
  const code = awaitsConfirmation(auth) ? ` ${t.confirmationCode}: ${auth.confirmationCode}.` : "";
  return {
    ...message({ lang, t, text: `${outcome}${code} ${t.closeWindow}` }),
    title: titleOf(auth, t),
  };
}

function notFound(lang: Lang): PageContent {
  const t = textsOf(lang);
  return message({ lang, t, text: t.unknownLink });
}

function message(options: { lang: Lang; t: Texts; text: string }): PageContent {
  const { lang, t, text } = options;
  return { lang, t, title: t.bank, step: { kind: "message", text } };
}

async function readForm(c: Context): Promise<URLSearchParams> {
  const type = (c.req.header("content-type") ?? "").toLowerCase();
  if (!type.startsWith("application/x-www-form-urlencoded")) return new URLSearchParams();
  try {
    return new URLSearchParams(await c.req.text());
  } catch {
    return new URLSearchParams();
  }
}

function cookie(c: Context): string | undefined {
  for (const part of (c.req.header("cookie") ?? "").split(";")) {
    const [name, ...value] = part.trim().split("=");
    if (name === COOKIE) return value.join("=");
  }
  return undefined;
}

function sessionCookie(state: SandboxState, id: string): string {
  const secure = state.settings.scaOrigin().startsWith("https:") ? "; Secure" : "";
  return `${COOKIE}=${id}; HttpOnly; SameSite=Lax${secure}`;
}

/** Compares two secrets in time that does not depend on where they differ. */
function sameSecret(given: string | null, expected: string): boolean {
  if (given === null || given.length !== expected.length) return false;
  let diff = 0;
  for (let i = 0; i < given.length; i++) diff |= given.charCodeAt(i) ^ expected.charCodeAt(i);
  return diff === 0;
}

function randomId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_");
}
