/**
 * The limits a custom pattern is held to when a guardrail is saved (and when a stored one is
 * compiled: one over them is unusable), so that filtering a text costs a bounded amount of work
 * per character whoever wrote the pattern. RE2 keeps one search linear in the text, but by a factor
 * the pattern sets, and redaction runs one search per match: `[a-z]{1,900}[0-9]` (17 characters)
 * held the event loop for 4 s on a 64 KiB prompt, and `a.*b|a` takes minutes on 64 KiB of `a`.
 * The limits, what they cost at most and how that was measured: docs/api/content-filters.md.
 *
 * @module
 */
import type { RE2JS } from "re2js";
import { gatewayError } from "../../../wire/errors.js";
import { AnalysisBudget, patternCost, TooComplex, type PatternCost } from "./pattern-cost.js";

/** RE2 instructions of the compiled program: counted repetitions copy their operand (`x{1,900}` is 1,800). */
export const MAX_PATTERN_INSTRUCTIONS = 500;
/**
 * Matcher steps per character of text: instructions live at once × (2 + characters read again per
 * match) (pattern-cost.ts). At 64, the costliest patterns measured redact about 1.2 s of CPU per
 * MiB of the text that costs them most, on the 2-core CI machine; most useful patterns are under 30.
 */
export const MAX_WORK_PER_CHARACTER = 64;

/** 400 naming the filter and the limit it is over; never quotes the pattern (its owner's business). */
export function checkPatternCost(compiled: RE2JS, where: string, budget = new AnalysisBudget()): PatternCost {
  const instructions = compiled.programSize();
  if (instructions > MAX_PATTERN_INSTRUCTIONS) {
    throw gatewayError(
      400,
      `${where}.pattern compiles to ${instructions} RE2 instructions, ` +
        `over the limit of ${MAX_PATTERN_INSTRUCTIONS}: ` +
        "counted repetitions such as {1,900} copy what they repeat; make them smaller",
      { field: `${where}.pattern` },
    );
  }
  let cost: PatternCost;
  try {
    cost = patternCost(compiled, budget);
  } catch (err) {
    if (!(err instanceof TooComplex)) throw err;
    throw gatewayError(400, `${where}.pattern is too complex to check: ${err.message}; simplify it`, {
      field: `${where}.pattern`,
    });
  }
  if (cost.matchesEmpty)
    throw gatewayError(400, `${where}.pattern can match an empty text (a match that redacts nothing)`, {
      field: `${where}.pattern`,
    });
  const work = workPerCharacter(cost);
  if (work > MAX_WORK_PER_CHARACTER) {
    const why = Number.isFinite(cost.rereadPerMatch)
      ? `the matcher can hold ${cost.liveInstructions} of its instructions at once and ` +
        `read ${cost.rereadPerMatch} characters again per match, ${work} steps per character`
      : "an alternative can run on past a shorter match without end, so the text is read again for every " +
        "match (as in a.*b|a); bound that alternative (a.{0,5}b|a) or put the shorter one first (a|a.*b)";
    throw gatewayError(
      400,
      `${where}.pattern costs too much to run: ${why}; the limit is ${MAX_WORK_PER_CHARACTER} steps per character`,
      { field: `${where}.pattern` },
    );
  }
  return cost;
}

/**
 * What the matcher does per character of text, at most: each live instruction stepped, each time
 * the character is read.
 */
export function workPerCharacter({ liveInstructions, rereadPerMatch }: PatternCost): number {
  return liveInstructions * (2 + rereadPerMatch);
}
