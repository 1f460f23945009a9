/**
 * Where `consent_scope` keeps what it learnt of a consent, and a reader of the TPP it names, for
 * the checks that ask whose a consent is (`basket_scope`) without knowing the record's layout.
 */
import type { Store } from "../src/store/types.ts";
import type { Identifiers } from "../src/psd2/identifiers.ts";
import { keyPart } from "./_shared_state.ts";
import { storedScope } from "./_consent_grants.ts";

/** The store key of a consent's learnt scope: its id in the canonical form. */
export function consentScopeKey(ids: Identifiers, consentId: string): string {
  return `scope:${keyPart(ids.id("consent_id", consentId))}`;
}

/**
 * The TPP a consent was given to, as `consent_scope` learnt it at creation; undefined when the
 * gateway never saw the consent (or saw it without a TPP identity). A store failure is thrown.
 */
export async function consentOwner(
  store: Store,
  ids: Identifiers,
  consentId: string,
): Promise<string | undefined> {
  const text = await store.get(consentScopeKey(ids, consentId));
  return text === undefined ? undefined : storedScope(text).tpp;
}
