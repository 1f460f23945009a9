/**
 * Structured logging: one JSON object per line, and a logger that keeps its lines for tests.
 */
/** One structured log line. */
export type LogEntry = Record<string, unknown>;

/** Where log lines go: JSON lines on stdout in production, an array in tests. */
export interface Logger {
  info(entry: LogEntry): void;
  error(entry: LogEntry): void;
}

/**
 * Collects lines and writes them in batches (one write per batch, at the latest `delayMs` after
 * the first line), so that a busy gateway does not pay one system call per request.
 */
function batchedWriter(file: { writeSync(bytes: Uint8Array): number }, delayMs = 20) {
  const encoder = new TextEncoder();
  let pending: string[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  function flush() {
    clearTimeout(timer);
    timer = undefined;
    if (pending.length === 0) return;
    let bytes = encoder.encode(pending.join(""));
    pending = [];
    while (bytes.byteLength > 0) bytes = bytes.subarray(file.writeSync(bytes));
  }
  globalThis.addEventListener("unload", flush);
  return (line: string) => {
    pending.push(line + "\n");
    if (pending.length >= 256) flush();
    else timer ??= setTimeout(flush, delayMs);
  };
}

/** Writes one line at once (console.error would prefix `[serve-worker-N ]` under --parallel). */
function lineWriter(file: { writeSync(bytes: Uint8Array): number }) {
  const encoder = new TextEncoder();
  return (line: string) => {
    let bytes = encoder.encode(line + "\n");
    while (bytes.byteLength > 0) bytes = bytes.subarray(file.writeSync(bytes));
  };
}

/** A logger writing one JSON object per line: info to stdout (batched), errors to stderr. */
export function jsonLogger(): Logger {
  const write = batchedWriter(Deno.stdout);
  const writeError = lineWriter(Deno.stderr);
  return {
    info: (entry) => write(JSON.stringify(entry)),
    error: (entry) => writeError(JSON.stringify({ level: "error", ...entry })),
  };
}

/** A logger that keeps its lines, for tests and tools. */
export function memoryLogger(): Logger & { lines: LogEntry[] } {
  const lines: LogEntry[] = [];
  return {
    lines,
    info: (entry) => lines.push({ level: "info", ...entry }),
    error: (entry) => lines.push({ level: "error", ...entry }),
  };
}
