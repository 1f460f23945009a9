/**
 * The gateway's command line run as an operator runs it: `deno <args>` in a clean environment
 * (only what Deno itself needs is kept), and a check that what it printed is JSON lines only.
 */

/** What a run printed and how it ended. */
export interface CleanRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** `deno <args>` to its end, with `env` over a clean environment (HOME, PATH and Deno's cache). */
export async function runClean(
  args: string[],
  env: Record<string, string> = {},
): Promise<CleanRun> {
  const keep: Record<string, string> = {};
  for (const name of ["HOME", "PATH", "DENO_DIR", "XDG_CACHE_HOME"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) keep[name] = value;
  }
  const output = await new Deno.Command(Deno.execPath(), {
    args,
    env: { ...keep, ...env },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
}

/** The lines of `text` that are not JSON objects (blank lines aside). */
export function notJson(text: string): string[] {
  return text.split("\n").filter((line) => {
    if (line.trim() === "") return false;
    try {
      return typeof JSON.parse(line) !== "object";
    } catch {
      return true;
    }
  });
}
