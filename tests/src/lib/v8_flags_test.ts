import assert from "node:assert/strict";
import { V8_FLAGS } from "../../../src/lib/v8_flags.ts";

const root = new URL("../../../", import.meta.url);

Deno.test("V8_FLAGS are in every way the gateway is started: tasks start, serve, compile and the Dockerfile", async () => {
  const tasks = JSON.parse(await Deno.readTextFile(new URL("deno.json", root))).tasks;
  for (const task of ["start", "serve", "compile"]) {
    assert.ok(tasks[task].includes(` ${V8_FLAGS} `), `deno task ${task}: ${tasks[task]}`);
  }
  const dockerfile = await Deno.readTextFile(new URL("Dockerfile", root));
  const command = dockerfile.split("\n").find((line) => line.startsWith("CMD "))!;
  assert.deepEqual(JSON.parse(command.slice(4)).slice(0, 2), ["run", V8_FLAGS]);
});

Deno.test("V8_FLAGS are flags this Deno takes", async () => {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["eval", V8_FLAGS, "console.log('up')"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(output.stderr);
  assert.equal(output.code, 0, stderr);
  assert.equal(new TextDecoder().decode(output.stdout).trim(), "up");
  assert.doesNotMatch(stderr, /unrecognized|unknown|Error/i);
});
