/**
 * Preloaded (`deno run --preload`) to run a gateway as Deno Deploy (Classic) would: without the
 * synchronous file system calls, which Deploy does not offer (its file APIs are async only:
 * readFile, readTextFile, readDir, stat, lstat, realPath, readLink, open), and without
 * `Deno.stdout` and `Deno.stderr` (its log takes the console's lines).
 */
import { SYNC_FS_CALLS } from "./no_sync_fs.ts";

for (const name of SYNC_FS_CALLS) {
  Object.defineProperty(Deno, name, {
    value: () => {
      throw new Error(`Deno.${name} is not available on Deno Deploy`);
    },
  });
}
for (const name of ["stdout", "stderr"] as const) {
  Object.defineProperty(Deno, name, { value: undefined });
}
