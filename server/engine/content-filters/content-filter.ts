import type { JsonObject } from "@bufbuild/protobuf";
import { RE2JS } from "re2js";
import { gatewayError, errorMessage } from "../../../wire/errors.js";
import type { StoredContentFilterBuiltin } from "../../platform/db/governance-models.js";
import { DETECTORS, UNAVAILABLE_SLUGS, type Detector, type FilterAction } from "./builtin-detectors.js";
import { AnalysisBudget } from "./pattern-cost.js";
import { checkPatternCost } from "./pattern-limits.js";

/**
 * One content filter of a guardrail, compiled: a built-in detector or a custom RE2 pattern. What
 * the caller and the operator are told names the guardrail and the filter (`slug`, or the custom
 * filter's label), never the text it matched.
 */
export interface ContentFilter {
  guardrail: string;
  /** The built-in slug, or `custom`: a bounded metric label. */
  slug: string;
  /** How errors name the filter: the slug, or the custom filter's label. */
  name: string;
  action: FilterAction;
  label: string;
  matches(text: string): boolean;
  /** `text` with each match replaced by the label. */
  redact(text: string): string;
  /**
   * Why the stored filter cannot be applied (a row saved before filters were checked names a slug
   * or pattern this gateway refuses): the calls it governs are refused saying so, never let
   * through unfiltered.
   */
  unusable?: string;
}

/** As OpenRouter: a custom pattern redacts or blocks (flagging is the prompt-injection detector's). */
const CUSTOM_ACTIONS: readonly FilterAction[] = ["redact", "block"];
/** A custom filter's label when it has none. */
const CUSTOM_LABEL = "[REDACTED]";
const MAX_PATTERN_LENGTH = 1000;
const MAX_LABEL_LENGTH = 100;

/** 400 for a slug this gateway does not detect, or an action the slug does not take. */
export function checkBuiltin({ slug, action }: { slug: string; action: string }): void {
  if (UNAVAILABLE_SLUGS.has(slug)) {
    throw gatewayError(
      400,
      `content_filter_builtins: '${slug}' is not available in this gateway; ` +
        `accepted slugs: ${[...DETECTORS.keys()].join(", ")}`,
    );
  }
  const detector = DETECTORS.get(slug);
  if (detector === undefined)
    throw gatewayError(
      400,
      `content_filter_builtins: unknown slug '${slug}'; accepted slugs: ${[...DETECTORS.keys()].join(", ")}`,
    );
  if (!detector.actions.includes(action as FilterAction)) {
    throw gatewayError(
      400,
      `content_filter_builtins: slug '${slug}' does not take action '${action}'; ` +
        `accepted: ${detector.actions.join(", ")}`,
    );
  }
}

interface CustomFilter {
  pattern: string;
  label: string;
  action: FilterAction;
  compiled: RE2JS;
}

/**
 * A custom filter as stored, checked: a 400 names the filter (by position) and what is wrong. The
 * patterns of one guardrail share one budget for checking their cost (pattern-cost.ts).
 */
export function checkCustomFilter(filter: JsonObject, index: number, budget = new AnalysisBudget()): CustomFilter {
  const where = `content_filters[${index}]`;
  for (const key of Object.keys(filter)) {
    if (key !== "pattern" && key !== "label" && key !== "action")
      throw gatewayError(400, `${where}: unknown field '${key}'; accepted: pattern, label, action`);
  }
  const { pattern, label = CUSTOM_LABEL, action } = filter;
  if (typeof pattern !== "string" || pattern.length === 0 || pattern.length > MAX_PATTERN_LENGTH) {
    throw gatewayError(400, `${where}.pattern is required: a string of 1 to ${MAX_PATTERN_LENGTH} characters`);
  }
  if (typeof label !== "string" || label.length > MAX_LABEL_LENGTH)
    throw gatewayError(400, `${where}.label must be a string of at most ${MAX_LABEL_LENGTH} characters`);
  if (typeof action !== "string" || !CUSTOM_ACTIONS.includes(action as FilterAction)) {
    throw gatewayError(400, `${where}.action must be one of ${CUSTOM_ACTIONS.join(", ")}`);
  }
  return {
    pattern,
    label: label || CUSTOM_LABEL,
    action: action as FilterAction,
    compiled: compilePattern(pattern, where, budget),
  };
}

/**
 * RE2: matching time is linear in the text whatever the pattern, but by a factor the pattern sets;
 * pattern-limits.ts bounds it, so that a guardrail cannot stall calls.
 */
function compilePattern(pattern: string, where: string, budget: AnalysisBudget): RE2JS {
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(pattern);
  } catch (err) {
    throw gatewayError(400, `${where}.pattern '${pattern}' is not a pattern RE2 accepts: ${errorMessage(err)}`);
  }
  // A pattern that matches nothing at all would "redact" every position of every text.
  if (compiled.matches("")) throw gatewayError(400, `${where}.pattern '${pattern}' matches the empty text`);
  checkPatternCost(compiled, where, budget);
  return compiled;
}

export function builtinFilter(guardrail: string, { slug, label, action }: StoredContentFilterBuiltin): ContentFilter {
  checkBuiltin({ slug, action });
  return {
    guardrail,
    slug,
    name: slug,
    action: action as FilterAction,
    label,
    ...detectorOps(DETECTORS.get(slug)!, label),
  };
}

/** A stored filter that cannot be compiled; `slug` is `unusable` so that the metric's labels stay bounded. */
export function unusableFilter(guardrail: string, name: string, reason: string): ContentFilter {
  return {
    guardrail,
    slug: "unusable",
    name,
    action: "block",
    label: "",
    matches: () => true,
    redact: (text) => text,
    unusable: reason,
  };
}

export function customFilter(
  guardrail: string,
  stored: JsonObject,
  index: number,
  budget = new AnalysisBudget(),
): ContentFilter {
  const { label, action, compiled: re } = checkCustomFilter(stored, index, budget);
  const name = label === CUSTOM_LABEL ? `content_filters[${index}]` : label;
  return {
    guardrail,
    slug: "custom",
    name,
    action,
    label,
    // `test` runs on RE2's DFA, several times faster than the matcher, and no match of an accepted
    // pattern is empty (pattern-limits.ts), so a text it finds a match in holds a real one.
    matches: (text) => re.test(text),
    redact: (text) => {
      if (!re.test(text)) return text;
      const matcher = re.matcher(text);
      let out = "";
      let from = 0;
      while (matcher.find()) {
        out += text.slice(from, matcher.start()) + label;
        from = matcher.end();
      }
      return from === 0 ? text : out + text.slice(from);
    },
  };
}

function detectorOps({ pattern, accepts }: Detector, label: string): Pick<ContentFilter, "matches" | "redact"> {
  if (accepts === undefined) {
    return {
      matches: (text) => {
        pattern.lastIndex = 0;
        return pattern.test(text);
      },
      redact: (text) => text.replace(pattern, () => label),
    };
  }
  return {
    matches: (text) => {
      for (const [match] of text.matchAll(pattern)) if (accepts(match)) return true;
      return false;
    },
    redact: (text) => text.replace(pattern, (match) => (accepts(match) ? label : match)),
  };
}
