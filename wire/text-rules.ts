/**
 * Text checks shared by validation, scope lookups and the REST decoder.
 *
 * @module
 */

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

declare global {
  interface String {
    /** ES2024, in Node since 20: false when a UTF-16 surrogate lacks its partner (no UTF-8 form). */
    isWellFormed(): boolean;
  }
}

export function isWellFormed(text: string): boolean {
  return text.isWellFormed();
}

/**
 * Why a text cannot be taken as sent, or undefined: the one rule for every string a request
 * carries (docs/decisions.md, "Hostile input: text and numbers"). PostgreSQL `text` and `jsonb`
 * hold no U+0000 (Sequelize's escaping would store it as the two characters `\0`, a bound
 * parameter fails), and a lone surrogate has no UTF-8 form (it would be stored as U+FFFD), so
 * either would come back as something else; the request is refused instead. The phrase follows
 * the field's name in a 400.
 */
export function textProblem(text: string): string | undefined {
  if (text.includes("\u0000")) return "must not contain NUL characters (U+0000), which cannot be stored";
  if (!isWellFormed(text)) return "must be well-formed Unicode (it contains an unpaired surrogate)";
  return undefined;
}

/** A `\u` escape of U+0000 or of a surrogate, not itself escaped (an even run of backslashes before it). */
const UNSTORABLE_ESCAPE = /(?<!\\)((?:\\\\)*)\\u(?:0000|d[89a-f][0-9a-f]{2})/gi;

/**
 * JSON text for a `jsonb` column from what a provider answered. JSON.stringify writes U+0000 and
 * lone surrogates as `\u` escapes, which `jsonb` refuses (a paired surrogate is written as the
 * character itself): they become U+FFFD. Unlike a request, an answer is stored rather than
 * refused: the call was made and is paid for.
 */
export function storableJson(value: unknown): string {
  const text = JSON.stringify(value);
  return text.includes("\\u") ? text.replace(UNSTORABLE_ESCAPE, "$1\\ufffd") : text;
}
