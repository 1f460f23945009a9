/**
 * main.ts as its own process, as the container and the binary run it.
 */
import { V8_FLAGS } from "../../src/lib/v8_flags.ts";

/** A running main.ts, its stderr so far and a reader for the rest. */
export interface MainProcess {
  child: Deno.ChildProcess;
  /** What it wrote to stderr up to its "xs2a-edge on" line. */
  said: string;
  stderr: ReadableStreamDefaultReader<string>;
}

/**
 * Starts `main.ts` (or another entry, such as `deno task start`'s) with the given arguments and
 * environment; waits until it listens.
 */
export async function startMain(
  args: string[],
  options: { env: Record<string, string>; clearEnv?: boolean; entry?: string },
): Promise<MainProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", V8_FLAGS, "--allow-all", options.entry ?? "main.ts", ...args],
    env: options.env,
    clearEnv: options.clearEnv ?? false,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let said = "";
  while (!said.includes("xs2a-edge on")) {
    const { value, done } = await stderr.read();
    if (done) break;
    said += value;
  }
  return { child, said, stderr };
}
