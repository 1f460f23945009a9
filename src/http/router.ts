/**
 * The gateway's Hono router: templates of literal and `:param` segments, and `*` for middleware
 * that runs on every request. Built for the gateway's route table, where every route answers (an
 * operation, or its path's 405): of the routes matching a request, only the first is returned,
 * after the `*` middleware registered before it. Hono's trie router returns every match and
 * allocated about 3 KB per request doing so; this one compares segments of the few routes with
 * the request's number of segments.
 */
import type { Params, Result, Router } from "hono/router";

interface Route<T> {
  method: string;
  /** Segments of the template (without the leading empty one); undefined for `*`. */
  segments?: string[];
  /** The parameter's name at each position, or undefined for a literal segment. */
  names?: (string | undefined)[];
  handler: T;
}

const NO_PARAMS: Params = Object.freeze({}) as Params;

/** A Hono router where the first matching route wins (after the `*` middleware before it). */
export class FirstMatchRouter<T> implements Router<T> {
  name = "FirstMatchRouter";
  #routes: Route<T>[] = [];
  /** Routes by number of segments, `*` routes included in each; built at the first match. */
  #bySize?: Map<number, Route<T>[]>;
  #anySize: Route<T>[] = [];

  add(method: string, path: string, handler: T): void {
    this.#bySize = undefined;
    if (path === "*" || path === "/*") {
      this.#routes.push({ method, handler });
      return;
    }
    if (!path.startsWith("/") || /[*?{}()]/.test(path)) {
      throw new Error(`FirstMatchRouter takes "*" and /literal/:param paths, not "${path}"`);
    }
    const segments = path.slice(1).split("/");
    const names = segments.map((s) => s.startsWith(":") ? s.slice(1) : undefined);
    this.#routes.push({ method, segments, names, handler });
  }

  match(method: string, path: string): Result<T> {
    const bySize = this.#bySize ?? this.#build();
    const parts = path.split("/");
    const routes = bySize.get(parts.length - 1) ?? this.#anySize;
    const found: [T, Params][] = [];
    for (const route of routes) {
      if (route.method !== method && route.method !== "ALL") continue;
      if (route.segments === undefined) {
        found.push([route.handler, NO_PARAMS]);
        continue;
      }
      const params = matchSegments(route, parts);
      if (params) {
        found.push([route.handler, params]);
        break;
      }
    }
    return [found];
  }

  #build(): Map<number, Route<T>[]> {
    const sizes = new Set(this.#routes.flatMap((r) => r.segments ? [r.segments.length] : []));
    const bySize = new Map<number, Route<T>[]>();
    for (const size of sizes) {
      bySize.set(size, this.#routes.filter((r) => !r.segments || r.segments.length === size));
    }
    this.#anySize = this.#routes.filter((r) => !r.segments);
    this.#bySize = bySize;
    return bySize;
  }
}

/** The route's parameters when `parts` (the path split at "/") fits its template. */
function matchSegments<T>(route: Route<T>, parts: string[]): Params | undefined {
  const segments = route.segments!;
  const names = route.names!;
  let params: Params | undefined;
  for (let i = 0; i < segments.length; i++) {
    const part = parts[i + 1];
    const name = names[i];
    if (name === undefined) {
      if (part !== segments[i]) return undefined;
    } else {
      if (part === "") return undefined;
      (params ??= {})[name] = part;
    }
  }
  return params ?? NO_PARAMS;
}
