/**
 * The gateway's Hono router: templates of literal and `:param` segments, and `*` for middleware
 * that runs on every request. Built for the gateway's route table, where every route answers (an
 * operation, or its path's 405): of the routes matching a request, only the first is returned,
 * after the `*` middleware registered before it. Hono's trie router returns every match and
 * allocated about 3 KB per request doing so; this one walks a tree of the templates' segments
 * (a literal segment, then a parameter) and builds the parameters of the winning route only.
 */
import type { Params, Result, Router } from "hono/router";

interface Route<T> {
  /** Position in the order of registration: the lowest matching one wins. */
  index: number;
  method: string;
  /** Segments of the template (without the leading empty one); undefined for `*`. */
  segments?: string[];
  /** The parameter's name at each position, or undefined for a literal segment. */
  names?: (string | undefined)[];
  handler: T;
}

/** A position in the tree: the routes whose templates end here, and where the next segment leads. */
interface Node<T> {
  ends: Route<T>[];
  literals: Map<string, Node<T>>;
  param?: Node<T>;
}

const NO_PARAMS: Params = Object.freeze({}) as Params;

const node = <T>(): Node<T> => ({ ends: [], literals: new Map() });

/** A Hono router where the first matching route wins (after the `*` middleware before it). */
export class FirstMatchRouter<T> implements Router<T> {
  name = "FirstMatchRouter";
  #routes: Route<T>[] = [];
  #stars: Route<T>[] = [];
  #root: Node<T> = node();

  add(method: string, path: string, handler: T): void {
    const index = this.#routes.length;
    if (path === "*" || path === "/*") {
      const route = { index, method, handler };
      this.#routes.push(route);
      this.#stars.push(route);
      return;
    }
    if (!path.startsWith("/") || /[*?{}()]/.test(path)) {
      throw new Error(`FirstMatchRouter takes "*" and /literal/:param paths, not "${path}"`);
    }
    const segments = path.slice(1).split("/");
    const names = segments.map((s) => s.startsWith(":") ? s.slice(1) : undefined);
    const route = { index, method, segments, names, handler };
    this.#routes.push(route);
    let at = this.#root;
    for (let i = 0; i < segments.length; i++) {
      if (names[i] !== undefined) at = at.param ??= node();
      else {
        let next = at.literals.get(segments[i]);
        if (!next) at.literals.set(segments[i], next = node());
        at = next;
      }
    }
    at.ends.push(route);
  }

  match(method: string, path: string): Result<T> {
    const parts = path.split("/");
    const route = parts[0] === "" ? first(this.#root, parts, 1, method) : undefined;
    const found: [T, Params][] = [];
    for (const star of this.#stars) {
      if (route && star.index > route.index) break;
      if (star.method === method || star.method === "ALL") found.push([star.handler, NO_PARAMS]);
    }
    if (route) found.push([route.handler, paramsOf(route, parts)]);
    return [found];
  }
}

/** The earliest registered route under `at` that fits `parts` from position `i` and the method. */
function first<T>(at: Node<T>, parts: string[], i: number, method: string): Route<T> | undefined {
  if (i === parts.length) {
    return at.ends.find((route) => route.method === method || route.method === "ALL");
  }
  const part = parts[i];
  const literal = at.literals.get(part);
  const byLiteral = literal && first(literal, parts, i + 1, method);
  const byParam = at.param && part !== "" ? first(at.param, parts, i + 1, method) : undefined;
  if (!byLiteral) return byParam;
  return !byParam || byLiteral.index < byParam.index ? byLiteral : byParam;
}

/** The route's parameters, from the request path's segments. */
function paramsOf<T>(route: Route<T>, parts: string[]): Params {
  const names = route.names!;
  let params: Params | undefined;
  for (let i = 0; i < names.length; i++) {
    const name = names[i];
    if (name !== undefined) (params ??= {})[name] = parts[i + 1];
  }
  return params ?? NO_PARAMS;
}
