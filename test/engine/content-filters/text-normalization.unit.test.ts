import * as assert from "uvu/assert";
import { suite } from "../../support/suite.js";
import { asciiDigits, normalizedForMatching } from "../../../server/engine/content-filters/text-normalization.js";

/** The normal form content filters match on: compatibility forms folded, format characters gone, ASCII digits. */
const test = suite("guardrails: content filter text normalization");

test("plain ASCII is its own normal form (the very same string)", () => {
  const text = "Mail jane@example.com about 078-05-1120.\n\t{}";
  assert.is(normalizedForMatching(text), text);
  assert.is(asciiDigits(text), text);
});

test("format characters (Cf) are removed: zero-width space, joiners, word joiner, BOM, soft hyphen, bidi marks", () => {
  for (const mark of ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u202e", "\u2066"]) {
    assert.is(normalizedForMatching(`jane${mark}@exam${mark}ple.com`), "jane@example.com", JSON.stringify(mark));
  }
});

test("NFKC folds compatibility forms: fullwidth letters, digits and punctuation, ligatures", () => {
  assert.is(normalizedForMatching("ｊａｎｅ＠ｅｘａｍｐｌｅ．ｃｏｍ"), "jane@example.com");
  assert.is(normalizedForMatching("０７８－０５－１１２０"), "078-05-1120");
  assert.is(normalizedForMatching("ﬁle"), "file");
});

test("decimal digits of every script become ASCII digits", () => {
  assert.is(normalizedForMatching("٠١٢٣٤٥٦٧٨٩"), "0123456789", "Arabic-Indic");
  assert.is(normalizedForMatching("۰۱۲۳۴۵۶۷۸۹"), "0123456789", "Extended Arabic-Indic");
  assert.is(normalizedForMatching("०१२३४५६७८९"), "0123456789", "Devanagari");
  assert.is(normalizedForMatching("๐๑๒๓๔๕๖๗๘๙"), "0123456789", "Thai");
  assert.is(normalizedForMatching("০১২৩৪৫৬৭৮৯"), "0123456789", "Bengali");
  // Mathematical digits sit in five runs of ten side by side: the value counts from each run's zero.
  assert.is(asciiDigits("𝟎𝟗𝟘𝟡𝟢𝟫𝟶𝟿"), "09090909");
  assert.is(asciiDigits("SSN ٠٧٨-٠٥-١١٢٠!"), "SSN 078-05-1120!");
});

test("what is not a disguise stays: letters of other scripts, accents, emoji", () => {
  assert.is(normalizedForMatching("Grüße, Ελλάδα, 東京 🎉"), "Grüße, Ελλάδα, 東京 🎉");
});

test.run();
