/**
 * The HTML of the SCA page: server-rendered, no script, no external asset. The one style sheet is
 * inline and allowed by its hash, so the Content-Security-Policy needs no 'unsafe-inline'.
 */
import type { SummaryRow } from "./sca_summary.ts";
import type { Lang, Texts } from "./sca_texts.ts";
import { TEST_USERS } from "./test_users.ts";

const CSS = `
:root{color-scheme:light;--ink:#1d2433;--muted:#5b6472;--line:#d8dde6;--brand:#0b5e4a}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--ink);background:#f4f6f9}
header{display:flex;justify-content:space-between;align-items:center;padding:12px 20px;background:var(--brand);color:#fff}
header a{color:#fff}
.banner{margin:0;padding:6px 20px;background:#fff4cc;font-size:14px}
main{max-width:520px;margin:24px auto;padding:24px;background:#fff;border:1px solid var(--line);border-radius:8px}
h1{font-size:22px;margin:0 0 16px}
h2{font-size:18px;margin:24px 0 8px}
dl{display:grid;grid-template-columns:max-content 1fr;gap:6px 16px;margin:0}
dt{color:var(--muted)}
dd{margin:0;white-space:pre-line;overflow-wrap:anywhere}
label{display:block;margin:12px 0 4px}
.account input{width:auto;margin-right:8px}
fieldset{border:1px solid var(--line);border-radius:4px;margin:12px 0}
input{width:100%;padding:8px;font:inherit;border:1px solid var(--line);border-radius:4px}
.actions{display:flex;gap:12px;margin-top:20px}
button{padding:10px 18px;font:inherit;border-radius:4px;border:1px solid var(--brand);background:var(--brand);color:#fff;cursor:pointer}
button.secondary{background:#fff;color:var(--brand)}
.notice{padding:8px 12px;background:#fde8e8;border-radius:4px}
details{margin-top:24px;font-size:14px}
table{border-collapse:collapse;width:100%}
td,th{text-align:left;padding:4px 6px;border-bottom:1px solid var(--line)}
`;

/** The CSP source that allows the inline style sheet. */
export async function styleSource(): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(CSS));
  return `'sha256-${btoa(String.fromCharCode(...new Uint8Array(digest)))}'`;
}

/** Escapes text for HTML content and attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** What a page shows. */
export interface PageContent {
  lang: Lang;
  t: Texts;
  title: string;
  summary?: SummaryRow[];
  notice?: string;
  /** The form of the current step, or a closing message. */
  step:
    | { kind: "login"; csrf: string; psuId?: string }
    | { kind: "otp"; csrf: string; accounts?: { iban: string; name: string }[] }
    | { kind: "message"; text: string };
}

/** The whole HTML document of a page. */
export function renderPage(content: PageContent): string {
  const { t, lang } = content;
  const other = lang === "ka"
    ? `<a href="?lang=en" hreflang="en" lang="en">English</a>`
    : `<a href="?lang=ka" hreflang="ka" lang="ka">ქართული</a>`;
  return `<!doctype html>
<html lang="${lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(`${content.title} · ${t.bank}`)}</title>
<style>${CSS}</style>
</head>
<body>
<header><strong>${escapeHtml(t.bank)}</strong><nav>${other}</nav></header>
<p class="banner">${escapeHtml(t.testBanner)}</p>
<main>
<h1>${escapeHtml(content.title)}</h1>
${content.summary ? summary(content.summary) : ""}
${content.notice ? `<p class="notice" role="alert">${escapeHtml(content.notice)}</p>` : ""}
${step(content)}
</main>
</body>
</html>
`;
}

function summary(rows: SummaryRow[]): string {
  const items = rows.map((row) =>
    `<dt>${escapeHtml(row.label)}</dt><dd>${escapeHtml(row.value)}</dd>`
  );
  return `<dl class="summary">${items.join("")}</dl>`;
}

function step(content: PageContent): string {
  const { t } = content;
  const s = content.step;
  if (s.kind === "message") return `<p id="outcome">${escapeHtml(s.text)}</p>`;
  const csrf = `<input type="hidden" name="csrf" value="${escapeHtml(s.csrf)}">`;
  const deny = `<button type="submit" name="action" value="deny" class="secondary" ` +
    `formnovalidate>${escapeHtml(t.deny)}</button>`;
  if (s.kind === "login") {
    return `<h2>${escapeHtml(t.loginHeading)}</h2>
<form method="post" id="login">${csrf}
<label for="psuId">${escapeHtml(t.psuId)}</label>
<input id="psuId" name="psuId" required autocomplete="username" value="${
      escapeHtml(s.psuId ?? "")
    }">
<label for="password">${escapeHtml(t.password)}</label>
<input id="password" name="password" type="password" required autocomplete="current-password">
<div class="actions"><button type="submit" name="action" value="login">${
      escapeHtml(t.login)
    }</button>${deny}</div>
</form>
${testUsers(t)}`;
  }
  return `<h2>${escapeHtml(t.otpHeading)}</h2>
<p>${escapeHtml(t.otpSent)}</p>
<form method="post" id="otp-form">${csrf}
${s.accounts ? accountPicker(t, s.accounts) : ""}<label for="otp">${escapeHtml(t.otp)}</label>
<input id="otp" name="otp" required inputmode="numeric" autocomplete="one-time-code" maxlength="6">
<div class="actions"><button type="submit" name="action" value="approve">${
    escapeHtml(t.approve)
  }</button>${deny}</div>
</form>`;
}

/** The checkboxes of a bank-offered consent: the PSU picks the accounts to share. */
function accountPicker(t: Texts, accounts: { iban: string; name: string }[]): string {
  const boxes = accounts.map((account) =>
    `<label class="account"><input type="checkbox" name="account" value="${
      escapeHtml(account.iban)
    }"> ${escapeHtml(account.name)} <code>${escapeHtml(account.iban)}</code></label>`
  );
  return `<fieldset id="accounts"><legend>${escapeHtml(t.chooseAccounts)}</legend>
${boxes.join("\n")}
</fieldset>
`;
}

function testUsers(t: Texts): string {
  const rows = TEST_USERS.map((user) =>
    `<tr><td><code>${escapeHtml(user.psuId)}</code></td><td>${
      escapeHtml(t.behaviours[user.behaviour])
    }</td></tr>`
  );
  return `<details id="test-users"><summary>${escapeHtml(t.testUsers)}</summary>
<p>${escapeHtml(t.testUsersHint)}</p>
<table>${rows.join("")}</table>
</details>`;
}
