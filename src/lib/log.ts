/**
 * Structured logging: one JSON object per line, each with `time` (ISO 8601) and `level`, and a
 * logger that keeps its lines for tests. Every line the gateway process writes goes through here:
 * the access log (stdout, batched), errors and operational events (stderr).
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

/** `entry` with its time and level first (an access-log line brings both: taken as it is). */
function stamped(level: "info" | "error", entry: LogEntry): LogEntry {
  if (entry.time !== undefined && entry.level !== undefined) return entry;
  return { time: new Date().toISOString(), level, ...entry };
}

/** A logger writing one JSON object per line: info to stdout (batched), errors to stderr. */
export function jsonLogger(): Logger {
  const write = Deno.stdout ? batchedWriter(Deno.stdout) : consoleWriter("log");
  const writeError = Deno.stderr ? lineWriter(Deno.stderr) : consoleWriter("error");
  return {
    info: (entry) => write(JSON.stringify(stamped("info", entry))),
    error: (entry) => writeError(JSON.stringify(stamped("error", entry))),
  };
}

/** Deno Deploy (Classic) has no `Deno.stdout` and `Deno.stderr`: there lines go to the console. */
function consoleWriter(method: "log" | "error") {
  return (line: string) => console[method](line);
}

const writeStderr = Deno.stderr ? lineWriter(Deno.stderr) : consoleWriter("error");

/** One JSON line on stderr at once (the process's start and stop, before a logger exists). */
export function logToStderr(level: "info" | "error", entry: LogEntry): void {
  writeStderr(JSON.stringify(stamped(level, entry)));
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
