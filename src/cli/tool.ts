/**
 * What the command-line tools for testers share (`tpp:certificate`, `tpp:sign`): a usage error, and
 * the run that prints a tool's result or says in one line what stopped it.
 */

/** A mistake in the options: its message and the usage are printed, and the exit code is 2. */
export class UsageError extends Error {}

/**
 * Runs a tool and prints what it returns. A file named on the command line that cannot be read is
 * one line (the message names it, a stack trace would not help) and exit code 1; a usage error
 * prints `usage` after its message, exit code 2; anything else is thrown.
 */
export async function runTool(run: () => Promise<string>, usage: string): Promise<void> {
  try {
    console.log(await run());
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.PermissionDenied) {
      console.error(error.message);
      Deno.exit(1);
    }
    if (!(error instanceof UsageError)) throw error;
    console.error(`${error.message}\n${usage}`);
    Deno.exit(2);
  }
}
