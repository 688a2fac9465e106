import { isIPv4, isIPv6 } from "node:net";
import { asciiDigits } from "./text-normalization.js";

/**
 * The built-in detectors of `content_filter_builtins`, as OpenRouter's "Sensitive Info" guardrail
 * names them. Each is a JavaScript regular expression written so that it cannot backtrack
 * super-linearly (every match starts only where a run of the characters it consumes starts, a
 * lookbehind says so), plus a check of what it found where a regular expression alone would
 * redact too much (the Luhn sum of a card number, the digit count of a phone number, the address
 * parser of node:net). `person-name` and `address` need a language model or a gazetteer, which this
 * gateway does not have: they are refused rather than accepted as filters that never match.
 *
 * The detectors that count digits take the digits of every script (`\p{Nd}`: Arabic-Indic,
 * Devanagari, fullwidth…) and check what they found on its ASCII digits, so that a redaction
 * replaces such a number where it stands. The texts they see are also matched in their normal form
 * (text-normalization.ts), which undoes the disguises a pattern cannot see through.
 */
export type FilterAction = "block" | "redact" | "flag";

export interface Detector {
  /** Global: every match is visited. */
  pattern: RegExp;
  /** Whether a match of `pattern` is what the detector looks for. */
  accepts?: (match: string) => boolean;
  actions: readonly FilterAction[];
}

const PII_ACTIONS: readonly FilterAction[] = ["redact", "block"];

export const DETECTORS: ReadonlyMap<string, Detector> = new Map<string, Detector>([
  [
    "email",
    {
      pattern: /(?<![\w.%+-])[\w.%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,63}(?![\w-])/g,
      actions: PII_ACTIONS,
    },
  ],
  [
    "credit-card",
    {
      // 13 to 19 digits, in groups separated by single spaces or dashes.
      pattern: /(?<![\p{Nd}-])\p{Nd}(?:[ -]?\p{Nd}){12,18}(?![\p{Nd}-]?\p{Nd})/gu,
      accepts: passesLuhn,
      actions: PII_ACTIONS,
    },
  ],
  [
    "ssn",
    {
      pattern: /(?<![\w\p{Nd}-])\p{Nd}{3}([- ])\p{Nd}{2}\1\p{Nd}{4}(?![\w\p{Nd}-])/gu,
      accepts: wasIssued,
      actions: PII_ACTIONS,
    },
  ],
  [
    "ip-address",
    {
      pattern:
        /(?<![\w\p{Nd}.:])(?:\p{Nd}{1,3}(?:\.\p{Nd}{1,3}){3}|[\p{Nd}A-Fa-f]{0,4}(?::[\p{Nd}A-Fa-f]{0,4}){2,7}(?:\.\p{Nd}{1,3}){0,3})(?![\w\p{Nd}:]|\.\p{Nd})/gu,
      accepts: (found) => {
        const candidate = asciiDigits(found);
        return isIPv4(candidate) || (isIPv6(candidate) && /[0-9A-Fa-f]/.test(candidate));
      },
      actions: PII_ACTIONS,
    },
  ],
  [
    "phone",
    {
      // International (+ and country code, then groups) or North American (3-3-4, optional 1).
      pattern:
        /(?<![\w\p{Nd}+])(?:\+\p{Nd}{1,3}(?:[ .-]?\(?\p{Nd}{1,4}\)?){2,6}|(?:1[ .-]?)?(?:\(\p{Nd}{3}\) ?|\p{Nd}{3}[ .-])\p{Nd}{3}[ .-]\p{Nd}{4})(?![\w\p{Nd}-]|\.\p{Nd})/gu,
      accepts: (candidate) => {
        const digits = candidate.replace(/\P{Nd}/gu, "").length;
        return digits >= 10 && digits <= 15;
      },
      actions: PII_ACTIONS,
    },
  ],
  [
    "regex-prompt-injection",
    {
      pattern: new RegExp(
        [
          String.raw`\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+)*` +
            String.raw`(?:previous|prior|above|earlier|preceding|system)\s+` +
            String.raw`(?:instructions|prompts?|rules|directions|messages)\b`,
          String.raw`\b(?:reveal|print|show|repeat|output)\s+(?:me\s+)?(?:your|the)\s+` +
            String.raw`(?:system\s+prompt|hidden\s+instructions|initial\s+instructions)\b`,
          String.raw`\byou\s+are\s+now\s+(?:in\s+)?(?:DAN|developer\s+mode|jailbroken|unrestricted)\b`,
          String.raw`\bdo\s+anything\s+now\b`,
          String.raw`\bpretend\s+(?:that\s+)?you\s+have\s+no\s+(?:rules|restrictions|guidelines)\b`,
        ].join("|"),
        "gi",
      ),
      actions: ["redact", "block", "flag"],
    },
  ],
]);

/** Slugs OpenRouter defines that this gateway cannot detect (see above): a 400 says so. */
export const UNAVAILABLE_SLUGS: ReadonlySet<string> = new Set(["person-name", "address"]);

/** Area 000, 666 and 9xx, group 00 and serial 0000 are never issued: such a number is no SSN. */
function wasIssued(candidate: string): boolean {
  const [area = "", group = "", serial = ""] = asciiDigits(candidate).split(/[- ]/);
  return area !== "000" && area !== "666" && !area.startsWith("9") && group !== "00" && serial !== "0000";
}

/** The Luhn checksum of the digits in `candidate`: what separates a card number from any long number. */
export function passesLuhn(found: string): boolean {
  const candidate = asciiDigits(found);
  let sum = 0;
  let double = false;
  for (let i = candidate.length - 1; i >= 0; i--) {
    const code = candidate.charCodeAt(i) - 48;
    if (code < 0 || code > 9) continue;
    const value = double ? code * 2 : code;
    sum += value > 9 ? value - 9 : value;
    double = !double;
  }
  return sum % 10 === 0;
}
