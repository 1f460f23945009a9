/**
 * Code run in a child process whose runtime trusts a test CA: the trust store (`DENO_CERT`) is read
 * when Deno starts, so a test cannot add a CA to its own process.
 */

/**
 * Runs `script` (a module's source, given to `deno eval`) with `caPem` in the runtime's trust store,
 * and returns what it printed, trimmed. Throws with its error output when it fails.
 */
export async function runTrusting(caPem: string, script: string): Promise<string> {
  const caFile = await Deno.makeTempFile({ suffix: ".pem" });
  try {
    await Deno.writeTextFile(caFile, caPem);
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["eval", script],
      env: { DENO_CERT: caFile },
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!output.success) {
      throw new Error(`The script failed:\n${new TextDecoder().decode(output.stderr)}`);
    }
    return new TextDecoder().decode(output.stdout).trim();
  } finally {
    await Deno.remove(caFile);
  }
}
