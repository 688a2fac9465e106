/** Text checks shared by validation, scope lookups and the REST decoder. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A UTF-16 surrogate without its partner: not well-formed Unicode, and not encodable as UTF-8. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function isWellFormed(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}
