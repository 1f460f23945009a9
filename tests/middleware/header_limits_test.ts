import assert from "node:assert/strict";
import { assertForwarded, assertRejected, policy, rig } from "../support/hardening.ts";
import { characterLength, characterProblem, headerLimits } from "../../middleware/header_limits.ts";
import { Hono } from "hono";
import { buildContext } from "../support/sections.ts";
import { operation } from "../../src/psd2/catalogue.ts";
import type { GatewayEnv } from "../../src/core/check.ts";
import { GatewayError } from "../../src/psd2/errors.ts";
import { initiationHeaders, REQUEST_ID, singlePayment } from "../support/requests.ts";

const READ = { "x-request-id": REQUEST_ID, "consent-id": "c-1" };

function initiate(extra: Record<string, string>) {
  return {
    method: "POST",
    headers: initiationHeaders(extra),
    body: JSON.stringify(singlePayment()),
  };
}

Deno.test("headerLimits() caps PSU-ID and friends at 50 characters", async () => {
  await using t = await rig(policy());
  for (const name of ["psu-id", "psu-id-type", "psu-corporate-id", "psu-corporate-id-type"]) {
    assertRejected(await t.call("/v1/payments/domestic", initiate({ [name]: "p".repeat(51) })), {
      status: 400,
      code: "FORMAT_ERROR",
      text: /must have at most 50 characters/,
    }, t.upstream);
  }
  assertForwarded(
    await t.call("/v1/payments/domestic", initiate({ "psu-id": "p".repeat(50) })),
    t.upstream,
  );
});

Deno.test("headerLimits() caps TPP-Redirect-URI at 500 characters", async () => {
  await using t = await rig(policy());
  const uri = "https://tpp.example/" + "a".repeat(481);
  assertRejected(await t.call("/v1/payments/domestic", initiate({ "tpp-redirect-uri": uri })), {
    status: 400,
    code: "FORMAT_ERROR",
    path: "TPP-Redirect-URI",
    text: /at most 500 characters/,
  }, t.upstream);
});

Deno.test("headerLimits() drops an over-long TPP-Brand-Logging-Information instead of rejecting", async () => {
  await using t = await rig(policy());
  const outcome = await t.call(
    "/v1/payments/domestic",
    initiate({ "tpp-brand-logging-information": "b".repeat(256) }),
  );
  assertForwarded(outcome, t.upstream);
  assert.equal(t.upstream.received[0].headers.get("tpp-brand-logging-information"), null);
  const findings = t.gateway.log.lines.at(-1)!.findings as Record<string, unknown>[];
  assert.equal(findings[0].check, "header_limits");
  assert.equal(findings[0].dropped, true);
});

Deno.test("headerLimits() caps any header and all headers together", async () => {
  await using t = await rig(
    policy({ header_limits: { max_header_bytes: 1000, max_total_bytes: 3000 } }),
  );
  assertRejected(
    await t.call("/v1/accounts", { headers: { ...READ, "x-anything": "v".repeat(1001) } }),
    {
      status: 400,
      code: "FORMAT_ERROR",
      path: "X-Anything",
      text: /at most 1000 bytes/,
    },
    t.upstream,
  );
  const many = Object.fromEntries([1, 2, 3, 4].map((i) => [`x-part-${i}`, "v".repeat(900)]));
  assertRejected(await t.call("/v1/accounts", { headers: { ...READ, ...many } }), {
    status: 400,
    code: "FORMAT_ERROR",
    path: "headers",
    text: /must not exceed 3000 bytes in total/,
  }, t.upstream);
});

Deno.test("headerLimits() rejects control characters in any header", async () => {
  await using t = await rig(policy());
  // C1 controls are what HTTP lets through (it refuses the C0 controls but TAB itself); TAB is
  // allowed inside a value (RFC 9110), see tests/middleware/_headers_test.ts.
  for (const value of ["a\x85b", "\xc2\x85", "a\t\xc2\x85"]) {
    assertRejected(
      await t.call("/v1/accounts", { headers: { ...READ, "psu-user-agent": value } }),
      {
        status: 400,
        code: "FORMAT_ERROR",
        path: "PSU-User-Agent",
        text: /must not contain control characters/,
      },
      t.upstream,
    );
  }
});

Deno.test("headerLimits() lets UTF-8 text through unless the policy wants ASCII only", async () => {
  const cafe = "caf\xc3\xa9 \xe1\x83\x90"; // "café ა" as UTF-8 bytes
  {
    await using t = await rig(policy());
    assertForwarded(
      await t.call("/v1/accounts", { headers: { ...READ, "psu-user-agent": cafe } }),
      t.upstream,
    );
  }
  await using t = await rig(policy({ header_limits: { ascii_only: true } }));
  assertRejected(await t.call("/v1/accounts", { headers: { ...READ, "psu-user-agent": cafe } }), {
    status: 400,
    code: "FORMAT_ERROR",
    text: /printable ASCII/,
  }, t.upstream);
});

Deno.test("characterProblem() tells UTF-8 text from C1 controls", () => {
  assert.equal(characterProblem("plain", false), undefined);
  assert.equal(characterProblem("caf\xc3\xa9", false), undefined);
  assert.match(characterProblem("\xc2\x9b", false)!, /control/);
  assert.match(characterProblem("x\x9by", false)!, /control/);
  assert.match(characterProblem("x\x7f", false)!, /control/);
});

Deno.test("headerLimits() counts a capped UTF-8 value in characters, not bytes", async () => {
  await using t = await rig(policy());
  const letter = "\xe1\x83\x90"; // "ა" as UTF-8 bytes
  assertForwarded(
    await t.call("/v1/payments/domestic", initiate({ "psu-id": letter.repeat(50) })),
    t.upstream,
  );
  assertRejected(
    await t.call("/v1/payments/domestic", initiate({ "psu-id": letter.repeat(51) })),
    {
      status: 400,
      code: "FORMAT_ERROR",
      path: "PSU-ID",
      text: /^Header "PSU-ID" must have at most 50 characters$/,
    },
    t.upstream,
    1,
  );
  // Bytes that are not UTF-8 count one character each.
  assertRejected(
    await t.call("/v1/payments/domestic", initiate({ "psu-id": "\xe9".repeat(51) })),
    { status: 400, code: "FORMAT_ERROR", path: "PSU-ID", text: /at most 50 characters/ },
    t.upstream,
    1,
  );
  assertForwarded(
    await t.call("/v1/payments/domestic", initiate({ "psu-id": "\xe9".repeat(50) })),
    t.upstream,
    2,
  );
});

Deno.test("characterLength() counts code points of UTF-8 and bytes of anything else", () => {
  assert.equal(characterLength("plain"), 5);
  assert.equal(characterLength("caf\xc3\xa9"), 4);
  assert.equal(characterLength("\xe1\x83\x90\xe1\x83\x91"), 2);
  assert.equal(characterLength("caf\xe9"), 4);
  assert.equal(characterLength("a\tb"), 3);
});

/** Runs the check built by hand on a request with exactly `headers`: its error's text, if any. */
async function judge(
  options: Record<string, unknown>,
  headers: [string, string][],
): Promise<string | undefined> {
  const check = headerLimits.create(
    headerLimits.options.parse(options),
    buildContext(operation("getAccountList")),
  )!;
  const app = new Hono<GatewayEnv>();
  let text: string | undefined;
  app.get("/", async (c, next) => {
    try {
      await check(c, next);
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      text = error.message;
      return c.text("refused", 400);
    }
  }, (c) => c.text("ok"));
  await app.request("/", { headers });
  return text;
}

Deno.test("headerLimits() counts names and values against max_total_bytes, the limit itself allowed", async () => {
  // 6 + 94 = 100 bytes.
  const headers: [string, string][] = [["x-fill", "v".repeat(94)]];
  assert.equal(await judge({ max_total_bytes: 100 }, headers), undefined);
  assert.equal(
    await judge({ max_total_bytes: 99 }, headers),
    "The request headers must not exceed 99 bytes in total",
  );
  // Two headers add up.
  const two: [string, string][] = [["x-a", "1234567"], ["x-b", "1234567"]];
  assert.equal(await judge({ max_total_bytes: 20 }, two), undefined);
  assert.match((await judge({ max_total_bytes: 19 }, two))!, /must not exceed 19 bytes/);
});

Deno.test("headerLimits() allows a header of exactly max_header_bytes or its cap", async () => {
  assert.equal(await judge({ max_header_bytes: 10 }, [["x-a", "v".repeat(10)]]), undefined);
  assert.equal(
    await judge({ max_header_bytes: 10 }, [["x-a", "v".repeat(11)]]),
    'Header "X-A" must have at most 10 bytes',
  );
  // A cap names are matched to in any letter case, counted in characters.
  assert.equal(await judge({ caps: { "X-Cap": 3 } }, [["x-cap", "vvv"]]), undefined);
  assert.equal(
    await judge({ caps: { "X-Cap": 3 } }, [["x-cap", "vvvv"]]),
    'Header "X-Cap" must have at most 3 characters',
  );
});

Deno.test("headerLimits() counts any other header in bytes, UTF-8 or not", async () => {
  const letters = "\xe1\x83\x90".repeat(4); // 4 characters, 12 bytes
  assert.equal(
    await judge({ max_header_bytes: 10 }, [["x-a", letters]]),
    'Header "X-A" must have at most 10 bytes',
  );
  assert.equal(await judge({ max_header_bytes: 12 }, [["x-a", letters]]), undefined);
});

Deno.test("characterProblem() reads TAB as a space, C0 controls first, ASCII always fine", () => {
  assert.equal(characterProblem("plain text\twith tab", true), undefined);
  assert.equal(characterProblem("caf\xc3\xa9\tbar", false), undefined);
  assert.equal(characterProblem("x\x01y", true), "must not contain control characters");
  assert.equal(characterProblem("x\x01y\xc3\xa9", false), "must not contain control characters");
  assert.equal(
    characterProblem("caf\xc3\xa9", true),
    "must contain printable ASCII characters only",
  );
  // A TAB inside a UTF-8 character: no longer UTF-8, judged as Latin-1, where 0x83 is a control.
  assert.equal(characterProblem("\xe1\x83\t\x90", false), "must not contain control characters");
});

Deno.test("headerLimits() with ascii_only still takes plain ASCII headers", async () => {
  await using t = await rig(policy({ header_limits: { ascii_only: true } }));
  assertForwarded(
    await t.call("/v1/accounts", { headers: { ...READ, "psu-user-agent": "Mozilla/5.0 (X11)" } }),
    t.upstream,
  );
});
