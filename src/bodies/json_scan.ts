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
  /** The keys seen: a list while the object is small, a set past {@link SMALL} keys. */
  keys?: string[] | Set<string>;
  expectKey: boolean;
}

/** Keys an object holds in a list (scanned for duplicates) before they move to a set. */
const SMALL = 16;

/** What ends a number, true, false or null in a JSON text: , ] } and JSON's whitespace. */
const SCALAR_END = new Uint8Array(128);
for (const ch of ",]} \t\n\r") SCALAR_END[ch.charCodeAt(0)] = 1;

function pathOf(stack: Frame[]): string {
  const parts: (string | number)[] = [];
  for (const frame of stack) {
    if (frame.array) parts.push(frame.index);
    else if (frame.key !== undefined) parts.push(frame.key);
  }
  return jsonPath(parts);
}

/** Adds a key to an object's keys; false when it is there already. */
function addKey(frame: Frame, key: string): boolean {
  const keys = frame.keys!;
  if (Array.isArray(keys)) {
    if (keys.includes(key)) return false;
    if (keys.length < SMALL) keys.push(key);
    else frame.keys = new Set([...keys, key]);
    return true;
  }
  if (keys.has(key)) return false;
  keys.add(key);
  return true;
}

/** Index of the closing quote of the string starting at `start`. */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (true) {
    const quote = text.indexOf('"', i);
    let backslashes = 0;
    for (let j = quote - 1; text.charCodeAt(j) === BACKSLASH; j--) backslashes++;
    if (backslashes % 2 === 0) return quote;
    i = quote + 1;
  }
}

const BACKSLASH = 0x5c;

/** Whether `text[from, to)` holds a C0, DEL or C1 control character ({@link hasControl}). */
function controlIn(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}

/** The first problem of a JSON text that parsed, or `undefined`. */
export function jsonProblem(text: string, maxDepth: number): JsonProblem | undefined {
  const stack: Frame[] = [];
  // The next backslash at or after the string being read (-1: none), found once for all strings
  // before it (looking again for every string would take quadratic time).
  let slash = -2;
  let i = 0;
  while (i < text.length) {
    const ch = text.charCodeAt(i);
    switch (ch) {
      case 0x7b: // {
      case 0x5b: // [
        if (stack.length >= maxDepth) {
          return { path: "body", problem: `must not nest deeper than ${maxDepth} levels` };
        }
        stack.push(
          ch === 0x7b
            ? { array: false, index: 0, keys: [], expectKey: true }
            : { array: true, index: 0, expectKey: false },
        );
        i++;
        break;
      case 0x7d: // }
      case 0x5d: // ]
        stack.pop();
        i++;
        break;
      case 0x2c: { // ,
        const top = stack[stack.length - 1];
        if (top.array) top.index++;
        else top.expectKey = true;
        i++;
        break;
      }
      case 0x22: { // "
        const end = stringEnd(text, i);
        if (slash !== -1 && slash <= i) slash = text.indexOf("\\", i + 1);
        // Unescaped, the text between the quotes is the value: no copy unless it is a key.
        const escaped = slash !== -1 && slash < end;
        const top = stack[stack.length - 1];
        if (top && !top.array && top.expectKey) {
          const value: string = escaped
            ? JSON.parse(text.slice(i, end + 1))
            : text.slice(i + 1, end);
          top.key = value;
          top.expectKey = false;
          if (!addKey(top, value)) return { path: pathOf(stack), problem: "must not be repeated" };
          if (hasControl(value)) {
            return { path: pathOf(stack), problem: "must not have control characters in its name" };
          }
        } else if (
          escaped ? hasControl(JSON.parse(text.slice(i, end + 1))) : controlIn(text, i + 1, end)
        ) {
          return { path: pathOf(stack), problem: "must not contain control characters" };
        }
        i = end + 1;
        break;
      }
      case 0x3a: // :
      case 0x20: // space
      case 0x09: // tab
      case 0x0a: // line feed
      case 0x0d: // carriage return
        i++;
        break;
      default:
        // A number, true, false or null: up to the next separator.
        i++;
        while (i < text.length && !SCALAR_END[text.charCodeAt(i)]) i++;
    }
  }
  return undefined;
}
