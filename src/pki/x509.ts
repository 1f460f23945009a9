/**
 * @peculiar/x509 (with its ASN.1 libraries and reflect-metadata, some hundred CommonJS modules),
 * loaded only when a policy or a request needs a certificate: a policy without certificates
 * starts without it (a cold start on Deno Deploy, a scaled-out instance).
 *
 * Parsing a policy is synchronous (zod transforms): whoever parses one that names certificates
 * calls {@link loadX509For} with its text first; {@link x509} then answers at once.
 */
/** The module: @peculiar/x509's exports. */
export type X509Library = typeof import("./x509_library.ts");

let library: X509Library | undefined;
let loading: Promise<X509Library> | undefined;

/** Loads @peculiar/x509 once; later calls get the same module. */
export function loadX509(): Promise<X509Library> {
  return loading ??= import("./x509_library.ts").then((module) => library = module);
}

/** Policy keys whose values are certificates read when the policy is parsed. */
const CERTIFICATE_KEYS = /\b(anchors|intermediates|tpp_keys)\b/;

/** Loads @peculiar/x509 when a policy text names certificates (before parsing it). */
export async function loadX509For(policyText: string): Promise<void> {
  if (CERTIFICATE_KEYS.test(policyText)) await loadX509();
}

/** @peculiar/x509, once {@link loadX509} has resolved; throws before. */
export function x509(): X509Library {
  if (!library) {
    throw new Error("@peculiar/x509 is not loaded yet: await loadX509() or loadX509For() first");
  }
  return library;
}
