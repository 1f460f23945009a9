/**
 * The merchant documents spell each language two ways: the checkout order's `locale` is `ka` or
 * `en-US`, the product catalogue's path `ge` or `en` (001). Both spellings are taken wherever a
 * locale is, and the core gets the form that document gives for that operation.
 */

/** The two spellings of each language: the checkout's and the catalogue's. */
const LANGUAGES = [
  { checkout: "ka", catalogue: "ge" },
  { checkout: "en-US", catalogue: "en" },
] as const;

/** Every accepted spelling, as a TPP may send it. */
export const LOCALE_SPELLINGS: readonly string[] = LANGUAGES.flatMap((l) => [
  l.checkout,
  l.catalogue,
]);

/** The checkout's spelling of a locale in either spelling (`ge` is `ka`); undefined if unknown. */
export function checkoutLocale(value: string): string | undefined {
  return LANGUAGES.find((l) => l.checkout === value || l.catalogue === value)?.checkout;
}

/** The catalogue's spelling of a locale in either spelling (`en-US` is `en`); undefined if unknown. */
export function catalogueLocale(value: string): string | undefined {
  return LANGUAGES.find((l) => l.checkout === value || l.catalogue === value)?.catalogue;
}
