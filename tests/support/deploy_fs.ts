/**
 * Preloaded (`deno run --preload`) to run a gateway as Deno Deploy (Classic) would: without the
 * synchronous file system calls, which Deploy does not offer (its file APIs are async only:
 * readFile, readTextFile, readDir, stat, lstat, realPath, readLink, open), and without
 * `Deno.stdout` and `Deno.stderr` (its log takes the console's lines).
 */
const names = [
  "readFileSync",
  "readTextFileSync",
  "readDirSync",
  "statSync",
  "lstatSync",
  "realPathSync",
  "readLinkSync",
  "openSync",
] as const;
for (const name of names) {
  Object.defineProperty(Deno, name, {
    value: () => {
      throw new Error(`Deno.${name} is not available on Deno Deploy`);
    },
  });
}
for (const name of ["stdout", "stderr"] as const) {
  Object.defineProperty(Deno, name, { value: undefined });
}
