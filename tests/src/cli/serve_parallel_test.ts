import assert from "node:assert/strict";
import { serveCommand } from "../../../src/cli/serve_parallel.ts";

const FLAGS = ["--v8-flags=--x", "--allow-net"];

Deno.test("serveCommand() listens on 127.0.0.1:8080 unless HOST and PORT say otherwise", () => {
  assert.deepEqual(serveCommand([...FLAGS, "serve.ts"], () => undefined), [
    "serve",
    "--parallel",
    ...FLAGS,
    "--host",
    "127.0.0.1",
    "--port",
    "8080",
    "serve.ts",
  ]);
  const env: Record<string, string> = { HOST: "0.0.0.0", PORT: "9000" };
  assert.deepEqual(
    serveCommand([...FLAGS, "serve.ts", "--extra"], (name) => env[name]),
    ["serve", "--parallel", ...FLAGS, "--host", "0.0.0.0", "--port", "9000", "serve.ts", "--extra"],
  );
});
