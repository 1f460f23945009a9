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
import { GatewayError } from "./errors.ts";

/** The handler that ends a chain: it answers the request and has no `next`. */
export type Handler = (c: GatewayContext) => Promise<Response>;

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

/** One check of an operation's chain and the mode it runs in. */
interface Layer {
  key: string;
  mode: Mode;
  run: Middleware;
}

/** Turns an error into the response (the app's error handler). */
export type ErrorResponder = (error: unknown, c: GatewayContext) => Response;

const DONE: Promise<void> = Promise.resolve();

/**
 * One request's walk through a chain. A check that throws before it passed the request on
 * (called `next`) has its error recorded as a finding; in `report` mode the request then goes on,
 * otherwise the error becomes the response, which the checks before it see as `c.res` (as in
 * Hono's compose: `next()` never rejects). A check that only validates and returns `next()` costs
 * one call: its result is the downstream promise itself and is passed up as it is.
 */
class Walk {
  /** Index of the check running now. */
  #cursor = -1;
  /** Highest index started: a check at index i passed the request on when this exceeds i. */
  #reached = -1;
  /** The promise the latest `dispatch` returned. */
  #last: Promise<void> = DONE;
  readonly next = (): Promise<void> => this.dispatch(this.#cursor + 1);

  constructor(
    readonly c: GatewayContext,
    readonly layers: readonly Layer[],
    readonly respond: ErrorResponder,
  ) {}

  dispatch(i: number): Promise<void> {
    if (i >= this.layers.length) return this.#last = DONE;
    this.#cursor = i;
    if (i > this.#reached) this.#reached = i;
    let result;
    try {
      result = this.layers[i].run(this.c, this.next);
    } catch (error) {
      return this.#last = this.#failed(i, error);
    }
    if (result === this.#last && this.#reached > i) return result as Promise<void>;
    if (result instanceof Response) {
      this.c.res = result;
      return this.#last = DONE;
    }
    if (result === undefined) return this.#last = DONE;
    return this.#last = result.then(
      (response) => {
        if (response instanceof Response) this.c.res = response;
      },
      (error) => this.#failed(i, error),
    );
  }

  #failed(i: number, error: unknown): Promise<void> {
    const layer = this.layers[i];
    if (error instanceof GatewayError && this.#reached === i) {
      this.c.get("findings").push(finding(layer.key, layer.mode, error));
      if (layer.mode === "report") return this.dispatch(i + 1);
    }
    this.c.res = this.respond(error, this.c);
    return DONE;
  }
}

/** An operation's chain, run as one function per request. */
export type Chain = (c: GatewayContext) => Promise<void>;

/** Builds one operation's chain: each factory runs once, with that operation's options. */
export function buildChain(
  { checks, terminal, options }: Pipeline & { options: Record<string, Record<string, unknown>> },
  context: Omit<BuildContext, "decisions" | "report">,
  respond: ErrorResponder,
): Chain {
  const layers: Layer[] = [];
  // One plan per operation, shared by its checks of shared state (one store decision a request).
  const decisions = {};
  for (const check of checks) {
    const resolved = options[check.key];
    const mode = (resolved.mode as Mode | undefined) ?? "enforce";
    if (mode === "off") continue;
    const run = check.create(resolved, {
      ...context,
      decisions,
      report: reporter(check.key, mode),
    });
    if (run) layers.push({ key: check.key, mode, run });
  }
  // The terminal is the innermost layer: the request reaches it when every check called `next`.
  const handle = terminal.create(options[terminal.key], {
    ...context,
    decisions,
    report: reporter(terminal.key, "enforce"),
  });
  layers.push({ key: terminal.key, mode: "enforce", run: handle });
  return (c) => new Walk(c, layers, respond).dispatch(0);
}
