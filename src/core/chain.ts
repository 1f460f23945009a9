/**
 * The assembly of each operation's chain, built once at start-up from the resolved policy and the
 * checks and terminal handler it was resolved with (their order is `middleware/mod.ts`).
 */
import type { z } from "zod";
import type {
  BuildContext,
  Check,
  Finding,
  GatewayContext,
  Middleware,
  Mode,
  Report,
} from "./check.ts";
import { GatewayError } from "../psd2/errors.ts";
import { type Answer, type AnswerStep, finish } from "./answer.ts";

/** The handler that ends a chain: it answers the request and has no `next`. */
export type Handler = (c: GatewayContext) => Promise<Answer>;

/**
 * The chain's terminal handler (Envoy's router filter): a policy key and options schema like a
 * check's, and a factory that builds, once per operation, the handler that answers the request
 * after every check passed it on. It applies to every operation and has no mode.
 */
export interface Terminal<Shape extends z.ZodRawShape = z.ZodRawShape, Key extends string = string>
  extends Omit<Check<Shape, Key>, "create"> {
  create(options: z.output<z.ZodObject<Shape>>, context: BuildContext): Handler;
}

/** Declares a terminal handler (identity function that keeps the option types and the key). */
export function defineTerminal<Shape extends z.ZodRawShape, Key extends string>(
  terminal: Terminal<Shape, Key>,
): Terminal<Shape, Key> {
  return terminal;
}

/** What a policy is resolved with and a chain built from: the checks in order, then the terminal. */
export interface Pipeline {
  checks: readonly Check[];
  terminal: Terminal;
}
function finding(check: string, mode: Mode, error: GatewayError): Finding {
  return {
    check,
    mode,
    status: error.status,
    code: error.code,
    path: error.path,
    text: error.message,
  };
}

/** The `report` a check is built with: its findings carry its key and mode. */
function reporter(check: string, mode: Mode): Report {
  return (c, error, details) => {
    const found = finding(check, mode, error);
    if (details?.dropped !== undefined) found.dropped = details.dropped;
    c.get("findings").push(found);
  };
}

/** One check's request step in an operation's chain, and the mode it runs in. */
interface Layer {
  key: string;
  mode: Mode;
  run: Middleware;
}

/** One check's answer step in an operation's chain. */
interface AnswerLayer {
  key: string;
  run: AnswerStep;
}

/** Turns an error into the gateway's answer (the app's error handler: it logs unknown ones). */
export type ErrorResponder = (error: unknown, c: GatewayContext) => Answer;

const DONE: Promise<void> = Promise.resolve();

/**
 * One request's walk through a chain's request steps. Each check gets its own `next`; calling it a
 * second time is an error (as in Hono's compose), never a silent no-op. A check that throws before
 * it passed the request on has its error recorded as a finding; in `report` mode the request then
 * goes on, otherwise the error becomes the answer. `next()` never rejects: whatever happens further
 * in becomes the answer, which the checks see only in their answer steps.
 */
class Walk {
  /** The highest index of a check that called its `next`. */
  #nexted = -1;
  /** The promise the latest `next` returned: see {@link Walk.dispatch}'s pass-through. */
  #passed: Promise<void> = DONE;
  /** The answer so far: the terminal's, a check's local reply, or an error's. */
  answer: Answer | undefined;
  /** The finding that stopped the request (or, judging, would have): the chain's decision. */
  refusal: Finding | undefined;

  constructor(
    readonly c: GatewayContext,
    readonly chain: Readonly<Built>,
  ) {}

  #next(i: number): Promise<void> {
    if (this.#nexted >= i) {
      const key = this.chain.layers[i]?.key ?? this.chain.terminalKey;
      return Promise.reject(new Error(`next() called multiple times by "${key}"`));
    }
    this.#nexted = i;
    return this.#passed = this.dispatch(i + 1);
  }

  dispatch(i: number): Promise<void> {
    const { layers } = this.chain;
    if (i === layers.length) return this.chain.judging ? DONE : this.#terminal();
    let result;
    try {
      result = layers[i].run(this.c, () => this.#next(i));
    } catch (error) {
      return this.#failed(i, error);
    }
    // Pass-through: a check that validates and returns `next()` itself hands back the promise of
    // the steps further in, which already settles as it should; wrapping it would cost each such
    // check (most of them) a promise and a microtask per request. Measured on a chain of 30 such
    // checks, 200,000 requests in one process: 1.5 to 3.2 us a request with it, 11 to 12 without.
    if (result === this.#passed) return result as Promise<void>;
    if (result === undefined) return this.#settled(i);
    return (result as Promise<unknown>).then(
      () => this.#settled(i),
      (error) => this.#failed(i, error),
    );
  }

  /** After check `i` returned: a local reply, if it gave one without passing the request on. */
  #settled(i: number): Promise<void> {
    if (this.#nexted < i) {
      const reply = this.c.get("localReply");
      if (reply) this.answer = reply;
      else if (this.answer === undefined) {
        return this.#failed(
          i,
          new Error(`"${this.chain.layers[i].key}" neither passed on nor answered`),
        );
      }
    }
    return DONE;
  }

  #terminal(): Promise<void> {
    let result;
    try {
      result = this.chain.terminal(this.c);
    } catch (error) {
      return this.#failed(this.chain.layers.length, error);
    }
    return result.then(
      (answer) => {
        this.answer = answer;
      },
      (error) => this.#failed(this.chain.layers.length, error),
    );
  }

  #failed(i: number, error: unknown): Promise<void> {
    const { layers } = this.chain;
    const key = layers[i]?.key ?? this.chain.terminalKey;
    const mode = layers[i]?.mode ?? "enforce";
    if (error instanceof GatewayError && this.#nexted < i) {
      const found = finding(key, mode, error);
      this.c.get("findings").push(found);
      if (mode !== "report") this.refusal ??= found;
      if (mode === "report" || this.chain.judging) {
        this.#nexted = i;
        return this.dispatch(i + 1);
      }
    }
    this.answer = this.chain.respond(error, this.c);
    return DONE;
  }

  /** The answer steps, last check first, on the answer; then the response. */
  async answered(): Promise<Response> {
    let answer = this.answer!;
    const { answers, respond } = this.chain;
    for (let i = answers.length - 1; i >= 0; i--) {
      try {
        const out = answers[i].run(this.c, answer);
        const next = out instanceof Promise ? await out : out;
        if (next) answer = next;
      } catch (error) {
        answer = respond(error, this.c);
      }
    }
    return finish(this.c, answer);
  }
}

/** What a chain is built into, once per operation. */
interface Built {
  /** The checks' request steps, in order. */
  layers: readonly Layer[];
  /** The checks' answer steps, in check order (run from the last). */
  answers: readonly AnswerLayer[];
  terminal: Handler;
  terminalKey: string;
  respond: ErrorResponder;
  /** A judge's chain: every finding is recorded and the walk goes on; nothing answers. */
  judging?: boolean;
}

/** An operation's chain, run as one function per request: the response the TPP gets. */
export type Chain = (c: GatewayContext) => Promise<Response>;

/**
 * A second judge of every request (a shadow policy: src/policy/shadow.ts), called as the chain
 * starts, before any check has seen the request; what it returns is awaited once the answer is
 * made, with the finding that refused the request (none when the chain passed it on).
 */
export type Observer = (
  c: GatewayContext,
) => ((refusal: Finding | undefined) => Promise<void>) | undefined;

/**
 * The request steps of a chain run as a judge on a request (a copy, in a context of its own):
 * every check runs, whatever an earlier one found, and nothing answers; it resolves to the
 * finding that would have refused the request.
 */
export type Judge = (c: GatewayContext) => Promise<Finding | undefined>;

/** What a chain or a judge is built from: the pipeline and one operation's options. */
type Resolved = Pipeline & { options: Record<string, Record<string, unknown>> };

/**
 * Builds one operation's judge from its checks' request steps, leaving out the checks in `skip`
 * (those of shared state, those with side effects) and the terminal.
 */
export function buildJudge(
  { checks, options }: Resolved,
  context: Omit<BuildContext, "decisions" | "report">,
  skip: ReadonlySet<string>,
  respond: ErrorResponder,
): Judge {
  const { layers } = buildLayers(checks.filter((check) => !skip.has(check.key)), options, {
    ...context,
    decisions: {},
  });
  const never: Handler = () => Promise.reject(new Error("a judge has no terminal"));
  const built: Built = Object.freeze({
    layers,
    answers: [],
    terminal: never,
    terminalKey: "judge",
    respond,
    judging: true,
  });
  return async (c) => {
    const walk = new Walk(c, built);
    await walk.dispatch(0);
    return walk.refusal;
  };
}

/** The request and answer steps of `checks` for one operation's options. */
function buildLayers(
  checks: readonly Check[],
  options: Record<string, Record<string, unknown>>,
  context: Omit<BuildContext, "report">,
): { layers: Layer[]; answers: AnswerLayer[] } {
  const layers: Layer[] = [];
  const answers: AnswerLayer[] = [];
  for (const check of checks) {
    const resolved = options[check.key];
    const mode = (resolved.mode as Mode | undefined) ?? "enforce";
    if (mode === "off") continue;
    const made = check.create(resolved, { ...context, report: reporter(check.key, mode) });
    if (!made) continue;
    const stage = typeof made === "function" ? { request: made } : made;
    if (stage.request) layers.push({ key: check.key, mode, run: stage.request });
    if (stage.answer) answers.push({ key: check.key, run: stage.answer });
  }
  return { layers, answers };
}

/**
 * Builds one operation's chain: each factory runs once, with that operation's options; an
 * `observe`r (a shadow policy) sees each request as it starts and the chain's decision.
 */
export function buildChain(
  { checks, terminal, options }: Resolved,
  context: Omit<BuildContext, "decisions" | "report">,
  respond: ErrorResponder,
  observe?: Observer,
): Chain {
  // One plan per operation, shared by its checks of shared state (one store decision a request).
  const decisions = {};
  const { layers, answers } = buildLayers(checks, options, { ...context, decisions });
  // The terminal is the innermost step: the request reaches it when every check called `next`.
  const handle = terminal.create(options[terminal.key], {
    ...context,
    decisions,
    report: reporter(terminal.key, "enforce"),
  });
  const built: Built = Object.freeze({
    layers,
    answers,
    terminal: handle,
    terminalKey: terminal.key,
    respond,
  });
  if (!observe) {
    return async (c) => {
      const walk = new Walk(c, built);
      await walk.dispatch(0);
      return await walk.answered();
    };
  }
  return async (c) => {
    const observed = observe(c);
    const walk = new Walk(c, built);
    await walk.dispatch(0);
    const response = await walk.answered();
    await observed?.(walk.refusal);
    return response;
  };
}
