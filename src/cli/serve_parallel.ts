/**
 * `deno task serve`: `deno serve --parallel` on HOST and PORT (127.0.0.1 and 8080 unless set, as
 * `deno task start` and main.ts). A task cannot give an environment variable a default, and
 * `deno serve` reads its address from flags only, so this small launcher passes them:
 *
 *   serve_parallel.ts [deno serve flags...] serve.ts [script arguments...]
 *
 * runs `deno serve --parallel [flags...] --host $HOST --port $PORT serve.ts [...]`, forwards
 * SIGTERM, SIGINT and SIGHUP to it and exits with its exit code.
 */

/** The `deno serve` command line for `args` and the environment. */
export function serveCommand(args: string[], env: (name: string) => string | undefined): string[] {
  const host = env("HOST") || "127.0.0.1";
  const port = env("PORT") || "8080";
  const script = args.findIndex((arg) => !arg.startsWith("-") && /\.[cm]?[jt]s$/.test(arg));
  const flags = script < 0 ? args : args.slice(0, script);
  const rest = script < 0 ? [] : args.slice(script);
  return ["serve", "--parallel", ...flags, "--host", host, "--port", port, ...rest];
}

if (import.meta.main) {
  const child = new Deno.Command(Deno.execPath(), {
    args: serveCommand(Deno.args, (name) => Deno.env.get(name)),
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
    Deno.addSignalListener(signal, () => {
      try {
        child.kill(signal);
      } catch {
        // Already ended.
      }
    });
  }
  Deno.exit((await child.status).code);
}
