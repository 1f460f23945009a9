/**
 * Runs a function as on Deno Deploy (Classic), without the synchronous file system calls Deploy
 * does not offer, in this process (tests/support/deploy_fs.ts does the same for a whole process).
 */
/** The synchronous file system calls Deno Deploy (Classic) does not offer. */
export const SYNC_FS_CALLS = [
  "readFileSync",
  "readTextFileSync",
  "readDirSync",
  "statSync",
  "lstatSync",
  "realPathSync",
  "readLinkSync",
  "openSync",
] as const;

/** `fn` with every synchronous file call throwing; they are restored after it. */
export async function withoutSyncFs<T>(fn: () => T | Promise<T>): Promise<T> {
  const saved = SYNC_FS_CALLS.map((name) =>
    [name, Object.getOwnPropertyDescriptor(Deno, name)!] as const
  );
  for (const name of SYNC_FS_CALLS) {
    Object.defineProperty(Deno, name, {
      configurable: true,
      value: () => {
        throw new Error(`Deno.${name} is not available on Deno Deploy`);
      },
    });
  }
  try {
    return await fn();
  } finally {
    for (const [name, descriptor] of saved) Object.defineProperty(Deno, name, descriptor);
  }
}
