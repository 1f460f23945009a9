/**
 * main.ts as its own process, as the container and the binary run it.
 */
import { V8_FLAGS } from "../../src/lib/v8_flags.ts";

/**
 * Deno's arguments for `deno serve --parallel` of serve.ts on 127.0.0.1:`port`, as
 * `deno task serve` runs it.
 */
export function serveArgs(port: number): string[] {
  const address = ["--host", "127.0.0.1", "--port", String(port)];
  return ["serve", "--parallel", "--allow-all", ...address, "serve.ts"];
}

/** A running main.ts, its stderr so far and a reader for the rest. */
export interface MainProcess {
  child: Deno.ChildProcess;
  /** What it wrote to stderr so far: up to its "xs2a-edge on" line, then as far as read. */
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
  const main = { child, said: "", stderr };
  await readUntil(main, /xs2a-edge on/);
  return main;
}

/**
 * Reads on what `main` writes to stderr, adding it to `said`, until `said` matches `pattern` or
 * the process has closed stderr (`pattern` omitted: to the end); resolves to `said`. The event a
 * test waits for, rather than a while of its own; `ms` (30 s) only bounds a run that fails.
 */
export async function readUntil(
  main: MainProcess,
  pattern?: RegExp,
  ms = 30_000,
): Promise<string> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not said within ${ms} ms: ${main.said}`)), ms);
  });
  try {
    while (!pattern?.test(main.said)) {
      const { value, done } = await Promise.race([main.stderr.read(), late]);
      if (done) break;
      main.said += value;
    }
    return main.said;
  } finally {
    clearTimeout(timer);
  }
}
