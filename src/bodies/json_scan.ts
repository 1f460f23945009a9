/**
 * A single pass over a JSON text that JSON.parse accepted, for what parsing hides: duplicate keys
 * (the gateway and the core could read different values), nesting deeper than a bound, and
 * control characters inside strings (escaped ones included). Iterative, so deep input cannot
 * overflow the stack.
 */
import { jsonPath } from "./issues.ts";
import { hasControl } from "../lib/controls.ts";

/** A problem found in the text: the JSON path and the end of a sentence about it. */
export interface JsonProblem {
  path: string;
  problem: string;
}

interface Frame {
  array: boolean;
  index: number;
  key?: string;
  keys?: Set<string>;
  expectKey: boolean;
}

const SCALAR_END = /[,\]}\s]/g;

function pathOf(stack: Frame[]): string {
  const parts: (string | number)[] = [];
  for (const frame of stack) {
    if (frame.array) parts.push(frame.index);
    else if (frame.key !== undefined) parts.push(frame.key);
  }
  return jsonPath(parts);
}

/** Index of the closing quote of the string starting at `start`. */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (true) {
    const quote = text.indexOf('"', i);
    let backslashes = 0;
    for (let j = quote - 1; text[j] === "\\"; j--) backslashes++;
    if (backslashes % 2 === 0) return quote;
    i = quote + 1;
  }
}

/** The first problem of a JSON text that parsed, or `undefined`. */
export function jsonProblem(text: string, maxDepth: number): JsonProblem | undefined {
  const stack: Frame[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    switch (ch) {
      case "{":
      case "[":
        if (stack.length >= maxDepth) {
          return { path: "body", problem: `must not nest deeper than ${maxDepth} levels` };
        }
        stack.push(
          ch === "{"
            ? { array: false, index: 0, keys: new Set(), expectKey: true }
            : { array: true, index: 0, expectKey: false },
        );
        i++;
        break;
      case "}":
      case "]":
        stack.pop();
        i++;
        break;
      case ",": {
        const top = stack[stack.length - 1];
        if (top.array) top.index++;
        else top.expectKey = true;
        i++;
        break;
      }
      case '"': {
        const end = stringEnd(text, i);
        const raw = text.slice(i, end + 1);
        const value: string = raw.includes("\\") ? JSON.parse(raw) : raw.slice(1, -1);
        const top = stack[stack.length - 1];
        if (top && !top.array && top.expectKey) {
          top.key = value;
          top.expectKey = false;
          if (top.keys!.has(value)) return { path: pathOf(stack), problem: "must not be repeated" };
          top.keys!.add(value);
          if (hasControl(value)) {
            return { path: pathOf(stack), problem: "must not have control characters in its name" };
          }
        } else if (hasControl(value)) {
          return { path: pathOf(stack), problem: "must not contain control characters" };
        }
        i = end + 1;
        break;
      }
      case ":":
      case " ":
      case "\t":
      case "\n":
      case "\r":
        i++;
        break;
      default: {
        SCALAR_END.lastIndex = i;
        const match = SCALAR_END.exec(text);
        i = match ? match.index : text.length;
      }
    }
  }
  return undefined;
}
