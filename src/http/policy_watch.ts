/**
 * Watching the policy file so that a change reloads it: the watch is on the file's directory, not
 * its inode, so that it survives atomic saves (a temporary file renamed over it: editors, `sed
 * -i`) and Kubernetes ConfigMap updates (the `..data` symlink swapped).
 */
import { dirname } from "node:path";

/**
 * The directories whose entries decide the file's content: its own, and its target's when it is a
 * symlink into another directory (edited there in place).
 */
async function watchedDirectories(file: string): Promise<string[]> {
  const dirs = [dirname(file)];
  try {
    const target = dirname(await Deno.realPath(file));
    if (target !== await Deno.realPath(dirs[0]).catch(() => dirs[0])) dirs.push(target);
  } catch {
    // The file is missing just now (between a removal and a rename): its directory will tell.
  }
  return dirs;
}

/** A watch that can be closed. */
export interface Watch {
  close(): void;
}

/**
 * Calls `onChange` (debounced) when an entry of the file's directory changes: a write, a rename
 * over it, a symlink swapped. Undefined where watching is not allowed.
 */
export async function watchPolicy(
  file: string,
  onChange: () => Promise<void>,
): Promise<Watch | undefined> {
  let closed = false;
  let watcher: Deno.FsWatcher | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let dirs: string[] = [];

  async function fire() {
    await onChange().catch(() => {});
    // A symlink now pointing into another directory: watch that one instead.
    const next = await watchedDirectories(file);
    if (!closed && next.join("\n") !== dirs.join("\n")) open(next);
  }

  function open(next: string[]): boolean {
    try {
      const opened = Deno.watchFs(next, { recursive: false });
      watcher?.close();
      watcher = opened;
      dirs = next;
    } catch {
      return false;
    }
    (async () => {
      for await (const event of watcher) {
        if (event.kind === "access") continue;
        clearTimeout(timer);
        timer = setTimeout(fire, 200);
      }
    })().catch(() => {});
    return true;
  }

  if (!open(await watchedDirectories(file))) return undefined;
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      watcher?.close();
    },
  };
}
