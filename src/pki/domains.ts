/**
 * Whether a URI lies in the domains of a TPP's website certificate (CN or SubjectAltName),
 * wildcards considered as RFC 6125 does: `*.tpp.example` covers exactly one more label.
 */

/** True when `host` is one of `domains` or covered by one of its wildcards. */
export function hostInDomains(host: string, domains: readonly string[]): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  if (name === "") return false;
  for (const domain of domains) {
    if (domain === name) return true;
    if (domain.startsWith("*.")) {
      const suffix = domain.slice(1);
      const label = name.slice(0, -suffix.length);
      if (name.endsWith(suffix) && label.length > 0 && !label.includes(".")) return true;
    }
  }
  return false;
}

/** The host of an absolute URI, or `undefined` when it is not one. */
export function uriHost(uri: string): string | undefined {
  try {
    const url = new URL(uri);
    return url.hostname === "" ? undefined : url.hostname.replace(/^\[|\]$/g, "");
  } catch {
    return undefined;
  }
}
