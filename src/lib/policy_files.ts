/**
 * The files a policy names (PEM bundles of trust anchors and TPP keys, JWKS files), read
 * asynchronously before the policy is parsed. Parsing is synchronous (zod schemas and their
 * checks), and Deno Deploy has no synchronous file reads: a policy that names a file would not
 * load there. The loaders read the text here instead of from the file system.
 *
 * Which strings name files is not known before parsing, so every string value of the policy that
 * looks like a path and is a regular file (under 4 MB) is read; the others cost one failed stat.
 */
import { type Document, parseDocument } from "yaml";

/** Largest file read ahead; a policy never names larger ones. */
const MAX_BYTES = 4 * 1024 * 1024;

const ENV_REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

const texts = new Map<string, string>();

let last: { text: string; document: Document.Parsed } | undefined;

/**
 * The YAML document of a policy text, parsed once for both the read-ahead here and the policy
 * parser (`src/policy/load.ts`): a start-up or reload parses the file once, not twice.
 */
export function policyDocument(text: string): Document.Parsed {
  if (last?.text !== text) last = { text, document: parseDocument(text) };
  return last.document;
}

/**
 * The text of a file the policy names: read ahead by {@link readPolicyFiles}, or else now (a
 * synchronous read: never on Deno Deploy, where every policy is read ahead).
 */
export function policyFileText(path: string): string {
  return texts.get(path) ?? Deno.readTextFileSync(path);
}

/** Every string value of a parsed YAML document, `${NAME}` references substituted. */
function strings(value: unknown, env: (name: string) => string | undefined, out: string[] = []) {
  if (typeof value === "string") {
    out.push(
      value.replace(ENV_REF, (_, name: string, fallback?: string) => env(name) ?? fallback ?? ""),
    );
  } else if (Array.isArray(value)) {
    for (const item of value) strings(item, env, out);
  } else if (value && typeof value === "object") {
    for (const item of Object.values(value)) strings(item, env, out);
  }
  return out;
}

/** A string that may be a file path (not PEM, not a URL, no line breaks). */
function mayBePath(text: string): boolean {
  return text.length > 0 && text.length <= 1024 && !/[\r\n]/.test(text) && !text.includes("://") &&
    (text.includes("/") || /\.[A-Za-z0-9]{2,5}$/.test(text));
}

/**
 * Reads every file the policy text `text` may name (after `${NAME}` substitution with `env`), so
 * that parsing it reads none. A file read before is read again (a reload sees its new content).
 */
export async function readPolicyFiles(
  text: string,
  env: (name: string) => string | undefined = (name) => Deno.env.get(name),
): Promise<void> {
  const parsed = policyDocument(text);
  if (parsed.errors.length > 0) return; // the parser reports them
  let document: unknown;
  try {
    document = parsed.toJS();
  } catch {
    return; // the parser reports it
  }
  const paths = [...new Set(strings(document, env).filter(mayBePath))];
  await Promise.all(paths.map(async (path) => {
    try {
      const info = await Deno.stat(path);
      if (!info.isFile || info.size > MAX_BYTES) return;
      texts.set(path, await Deno.readTextFile(path));
    } catch {
      texts.delete(path); // gone: the parser reports it
    }
  }));
}
