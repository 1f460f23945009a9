import assert from "node:assert/strict";
import { jsonLogger } from "../../../src/lib/log.ts";

Deno.test("jsonLogger() writes through the console where Deno.stdout and Deno.stderr are missing (Deno Deploy Classic)", async () => {
  const saved = ["stdout", "stderr", "console"].map((name) =>
    [
      name,
      Object.getOwnPropertyDescriptor(globalThis.Deno, name) ??
        Object.getOwnPropertyDescriptor(globalThis, name)!,
    ] as const
  );
  const lines: [string, string][] = [];
  const original = globalThis.console;
  Object.defineProperty(Deno, "stdout", { configurable: true, value: undefined });
  Object.defineProperty(Deno, "stderr", { configurable: true, value: undefined });
  globalThis.console = {
    ...original,
    log: (line: string) => lines.push(["log", line]),
    error: (line: string) => lines.push(["error", line]),
  };
  try {
    const log = jsonLogger();
    log.info({ msg: "served" });
    log.error({ msg: "failed" });
    await new Promise((resolve) => setTimeout(resolve, 50)); // a batch would be flushed by now
  } finally {
    globalThis.console = original;
    for (const [name, descriptor] of saved) {
      Object.defineProperty(Deno, name, descriptor);
    }
  }
  assert.deepEqual(
    lines.map(([method, line]) => [method, JSON.parse(line).level, JSON.parse(line).msg]),
    [["log", "info", "served"], ["error", "error", "failed"]],
  );
});
