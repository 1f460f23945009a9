/**
 * Control characters, for the "no control characters anywhere" rule: C0 (U+0000-U+001F), DEL
 * and C1 (U+007F-U+009F). Tested by code point, so that no regular expression holds them.
 */

/** Whether the text holds a C0, DEL or C1 control character (tab and newlines included). */
export function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true;
  }
  return false;
}

/** Whether the text holds a C0 or DEL control character. */
export function hasC0(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/** Whether the text holds a character XML 1.0 forbids (C0 but tab, LF, CR; U+FFFE, U+FFFF). */
export function hasXmlForbidden(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 ? code !== 0x9 && code !== 0xa && code !== 0xd : code >= 0xfffe) return true;
  }
  return false;
}
