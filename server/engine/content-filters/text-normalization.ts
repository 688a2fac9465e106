/**
 * The form of a text the content filters match on, so that a value cannot slip past them in
 * disguise: compatibility forms folded (NFKC: fullwidth `１２３` and `ｊａｎｅ＠…` become ASCII),
 * invisible format characters removed (Unicode category Cf: zero-width space, joiners, word joiner,
 * BOM, soft hyphen, bidi controls; `jane\u200b@example.com` is an address), and the digits of every
 * script written as ASCII digits (`٠٧٨-٠٥-١١٢٠` is an SSN). A text that is plain ASCII already is
 * its own normal form, and costs one scan to find that out.
 */
export function normalizedForMatching(text: string): string {
  if (PLAIN_ASCII.test(text)) return text;
  return asciiDigits(text.replace(FORMAT_CHARACTERS, "").normalize("NFKC").replace(FORMAT_CHARACTERS, ""));
}

/** Every decimal digit (`\p{Nd}`) of `text` as its ASCII digit; the rest unchanged. */
export function asciiDigits(text: string): string {
  if (PLAIN_ASCII.test(text)) return text;
  return text.replace(NON_ASCII_DIGIT, (digit) => String(digitValue(digit.codePointAt(0)!)));
}

/**
 * The value of a decimal digit. Unicode encodes each script's digits as one run of ten, zero to
 * nine, and keeps it so (a stability policy); runs may sit side by side (the mathematical digits),
 * so the value is the distance from the start of the whole run, modulo ten. No table to keep in
 * step with the ICU that Node.js ships.
 */
function digitValue(codePoint: number): number {
  let start = codePoint;
  while (start > 0 && DIGIT.test(String.fromCodePoint(start - 1))) start--;
  return (codePoint - start) % 10;
}

const PLAIN_ASCII = /^\p{ASCII}*$/u;
const FORMAT_CHARACTERS = /\p{Cf}/gu;
const DIGIT = /^\p{Nd}$/u;
const NON_ASCII_DIGIT = /(?![0-9])\p{Nd}/gu;
