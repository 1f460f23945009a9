import assert from "node:assert/strict";
import { Hono } from "hono";
import { z } from "zod";
import { buildChain, defineTerminal, type Pipeline } from "../../../src/core/chain.ts";
import { defineCheck, type Finding, type GatewayEnv, modal } from "../../../src/core/check.ts";
import { formatError } from "../../../src/psd2/errors.ts";
import { type Answer, changed, failureAnswer, localReply } from "../../../src/core/answer.ts";
import { operation } from "../../../src/psd2/catalogue.ts";
import { defaultServices } from "../../../src/policy/services.ts";
import { memoryLogger } from "../../../src/lib/log.ts";
import { TEST_SECTIONS } from "../../support/sections.ts";

/** What ran, in order, for one request. */
type Trace = string[];

/** A check that records itself and, when `refuse` is set, throws before passing the request on. */
function step(key: string, trace: Trace, refuse = false) {
  return defineCheck({
    key,
    description: `test check ${key}`,
    options: modal({}),
    create: () => (_c, next) => {
      trace.push(key);
      if (refuse) throw formatError(key, `Check "${key}" refuses`);
      return next();
    },
  });
}

/** The terminal: records itself and answers 201. */
function answering(trace: Trace) {
  return defineTerminal({
    key: "end",
    description: "test terminal",
    options: z.object({}),
    create: () => () => {
      trace.push("end");
      return Promise.resolve({ status: 201, headers: [], body: "done", source: "core" } as Answer);
    },
  });
}

/** Runs one request through the chain built from `pipeline` with `modes` per key. */
async function run(pipeline: Pipeline, modes: Record<string, string> = {}) {
  const options: Record<string, Record<string, unknown>> = { end: {} };
  for (const check of pipeline.checks) options[check.key] = { mode: modes[check.key] ?? "enforce" };
  const chain = buildChain(
    { ...pipeline, options },
    {
      operation: operation("getAccountList"),
      services: defaultServices({ log: memoryLogger() }),
      sections: TEST_SECTIONS,
    },
    (error) => failureAnswer(error),
  );
  let findings: Finding[] = [];
  const app = new Hono<GatewayEnv>().get("/", (c) => {
    c.set("findings", findings = []);
    return chain(c);
  });
  const response = await app.request("/");
  return { status: response.status, body: await response.text(), findings, response };
}

Deno.test("buildChain() runs the checks in the list's order, then the terminal", async () => {
  const trace: Trace = [];
  const pipeline = { checks: [step("a", trace), step("b", trace)], terminal: answering(trace) };
  const { status, findings } = await run(pipeline);
  assert.equal(status, 201);
  assert.deepEqual(trace, ["a", "b", "end"]);
  assert.deepEqual(findings, []);
});

Deno.test("buildChain(): a check in enforce mode that throws answers its error; nothing after it runs", async () => {
  const trace: Trace = [];
  const pipeline = {
    checks: [step("a", trace), step("b", trace, true), step("c", trace)],
    terminal: answering(trace),
  };
  const { status, body, findings } = await run(pipeline);
  assert.equal(status, 400);
  assert.equal(JSON.parse(body).tppMessages[0].path, "b");
  assert.deepEqual(trace, ["a", "b"]);
  assert.deepEqual(findings.map((f) => [f.check, f.mode, f.code]), [[
    "b",
    "enforce",
    "FORMAT_ERROR",
  ]]);
});

Deno.test("buildChain(): a check in report mode records its finding and the request goes on", async () => {
  const trace: Trace = [];
  const pipeline = {
    checks: [step("a", trace, true), step("b", trace)],
    terminal: answering(trace),
  };
  const { status, findings } = await run(pipeline, { a: "report" });
  assert.equal(status, 201);
  assert.deepEqual(trace, ["a", "b", "end"]);
  assert.deepEqual(findings.map((f) => [f.check, f.mode, f.path]), [["a", "report", "a"]]);
});

Deno.test("buildChain(): a check that is off is never built, one that does not apply costs nothing", async () => {
  const trace: Trace = [];
  let built = 0;
  const counted = defineCheck({
    key: "counted",
    description: "test check counted",
    options: modal({}),
    create: () => {
      built++;
      return undefined;
    },
  });
  const pipeline = { checks: [step("a", trace, true), counted], terminal: answering(trace) };
  const { status } = await run(pipeline, { a: "off", counted: "off" });
  assert.equal(status, 201);
  assert.equal(built, 0, "an off check is not built");
  assert.deepEqual(trace, ["end"]);
  await run(pipeline, { a: "off" });
  assert.equal(built, 1, "built once per chain, and left out when it returns nothing");
});

Deno.test("buildChain() hands each check a report() bound to its key and mode", async () => {
  const trace: Trace = [];
  const reporting = defineCheck({
    key: "reporting",
    description: "test check reporting",
    options: modal({}),
    create: (_options, { report }) => (c, next) => {
      report(c, formatError("X-Test", 'Header "X-Test" was dropped'), { dropped: true });
      return next();
    },
  });
  const pipeline = { checks: [reporting], terminal: answering(trace) };
  const { status, findings } = await run(pipeline, { reporting: "report" });
  assert.equal(status, 201);
  assert.deepEqual(findings, [{
    check: "reporting",
    mode: "report",
    status: 400,
    code: "FORMAT_ERROR",
    path: "X-Test",
    text: 'Header "X-Test" was dropped',
    dropped: true,
  }]);
});

/** A check whose answer step records itself and appends its key to the answer's `x-steps`. */
function marking(key: string, trace: Trace, request?: "refuse" | "reply") {
  return defineCheck({
    key,
    description: `test check ${key}`,
    options: modal({}),
    create: () => ({
      request: (c, next) => {
        trace.push(key);
        if (request === "refuse") throw formatError(key, `Check "${key}" refuses`);
        if (request === "reply") {
          return localReply(c, { status: 200, headers: [], body: key, source: "replay" });
        }
        return next();
      },
      answer: (_c, answer) => {
        trace.push(`${key}<`);
        const steps = answer.headers.find(([name]) => name === "x-steps")?.[1];
        return changed(answer, {
          headers: [
            ...answer.headers.filter(([name]) => name !== "x-steps"),
            ["x-steps", steps ? `${steps},${key}` : key],
          ],
        });
      },
    }),
  });
}

Deno.test("buildChain() runs the answer steps in reverse check order on the terminal's answer", async () => {
  const trace: Trace = [];
  const pipeline = {
    checks: [marking("a", trace), marking("b", trace)],
    terminal: answering(trace),
  };
  const { status, response } = await run(pipeline);
  assert.equal(status, 201);
  assert.deepEqual(trace, ["a", "b", "end", "b<", "a<"]);
  assert.equal(response.headers.get("x-steps"), "b,a");
  assert.equal(response.headers.get("x-content-type-options"), "nosniff");
});

Deno.test("buildChain() runs every answer step on a local error and on a local reply too", async () => {
  for (const kind of ["refuse", "reply"] as const) {
    const trace: Trace = [];
    const pipeline = {
      checks: [marking("a", trace), marking("b", trace, kind), marking("c", trace)],
      terminal: answering(trace),
    };
    const { status, body, response } = await run(pipeline);
    assert.equal(status, kind === "refuse" ? 400 : 200);
    if (kind === "reply") assert.equal(body, "b");
    // The checks after the one that answered never ran; every answer step did, last first.
    assert.deepEqual(trace, ["a", "b", "c<", "b<", "a<"]);
    assert.equal(response.headers.get("x-steps"), "c,b,a");
  }
});

Deno.test("buildChain(): an answer step that throws makes its error the answer; the steps before it still run", async () => {
  const trace: Trace = [];
  const failing = defineCheck({
    key: "failing",
    description: "test check failing",
    options: modal({}),
    create: () => ({
      answer: () => {
        throw formatError("failing", 'Check "failing" refuses the answer');
      },
    }),
  });
  const pipeline = { checks: [marking("a", trace), failing], terminal: answering(trace) };
  const { status, body, response } = await run(pipeline);
  assert.equal(status, 400);
  assert.equal(JSON.parse(body).tppMessages[0].path, "failing");
  assert.equal(response.headers.get("x-steps"), "a");
});

Deno.test("buildChain(): a check that calls next() twice gets an error, and nothing further in runs twice", async () => {
  const trace: Trace = [];
  let second: unknown;
  const twice = defineCheck({
    key: "twice",
    description: "test check twice",
    options: modal({}),
    create: () => async (_c, next) => {
      await next();
      try {
        await next();
      } catch (error) {
        second = error;
        throw error;
      }
    },
  });
  const pipeline = { checks: [twice, step("b", trace)], terminal: answering(trace) };
  const { status, body } = await run(pipeline);
  assert.ok(second instanceof Error);
  assert.match(second.message, /next\(\) called multiple times by "twice"/);
  assert.deepEqual(trace, ["b", "end"]);
  assert.equal(status, 500);
  assert.equal(JSON.parse(body).tppMessages[0].code, "INTERNAL_ERROR");
});

Deno.test("buildChain(): a check that neither passes the request on nor answers it is a 500, not a silent answer", async () => {
  const trace: Trace = [];
  const silent = defineCheck({
    key: "silent",
    description: "test check silent",
    options: modal({}),
    create: () => async () => {},
  });
  const pipeline = { checks: [silent, step("b", trace)], terminal: answering(trace) };
  const { status } = await run(pipeline);
  assert.equal(status, 500);
  assert.deepEqual(trace, []);
});
