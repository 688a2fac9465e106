import { RE2JS } from "re2js";
import * as assert from "uvu/assert";
import { suite } from "../../support/suite.js";
import { httpErrorOf } from "../../../wire/errors.js";
import {
  AnalysisBudget,
  MAX_ANALYSIS_STEPS,
  MAX_GUARDRAIL_ANALYSIS_STEPS,
  patternCost,
} from "../../../server/engine/content-filters/pattern-cost.js";
import {
  checkPatternCost,
  MAX_PATTERN_INSTRUCTIONS,
  MAX_WORK_PER_CHARACTER,
  workPerCharacter,
} from "../../../server/engine/content-filters/pattern-limits.js";
import { checkCustomFilter } from "../../../server/engine/content-filters/content-filter.js";

/**
 * What a custom pattern costs, counted as work (instructions the matcher holds, characters it reads
 * again) rather than timed, and the limits a guardrail's patterns are held to. The measurement
 * behind the limits: docs/api/content-filters.md.
 */
const test = suite("guardrails: the cost of a custom pattern");

const costOf = (pattern: string) => patternCost(RE2JS.compile(pattern));

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    if (err instanceof Error && "code" in err) {
      const { status, message } = httpErrorOf(err as Parameters<typeof httpErrorOf>[0]);
      assert.is(status, 400, message);
      return message;
    }
    throw err;
  }
  assert.unreachable("the pattern was accepted");
  return "";
}

test("counted repetition multiplies the instructions the matcher holds at once", () => {
  assert.equal(costOf("[a-z]+[0-9]"), { instructions: 5, liveInstructions: 3, rereadPerMatch: 0, matchesEmpty: false });
  assert.is(costOf("[a-z]{1,16}[0-9]").liveInstructions, 32);
  assert.is(costOf("[a-z]{1,17}[0-9]").liveInstructions, 34);
  assert.is(costOf("[a-z]{1,90}[0-9]").liveInstructions, 180);
  // A counted repetition that no second thread can share stays cheap: one token per `sk-`.
  assert.is(costOf("sk-[A-Za-z0-9]{20,40}").liveInstructions, 5);
});

test("a preferred alternative that runs on past a shorter match makes redaction read the text again per match", () => {
  assert.is(costOf("a.*b|a").rereadPerMatch, Number.POSITIVE_INFINITY);
  assert.is(costOf("a+b|a").rereadPerMatch, Number.POSITIVE_INFINITY);
  assert.is(costOf("c.*b|a").rereadPerMatch, Number.POSITIVE_INFINITY);
  // The preferred `a[a-z]{0,7}b` can read on 7 characters past the next search's match.
  assert.is(costOf("a[a-z]{0,7}b|a").rereadPerMatch, 7);
  // Reading past a match where no next match can end costs each character one more read at most.
  for (const pattern of [
    "BEGIN.*END",
    "BEGIN.*?END",
    "(?s)BEGIN.*END",
    "\\d+",
    "[A-Z]{2,}-\\d+",
    "\\w+@\\w+\\.\\w+",
    "project\\s+phoenix",
  ]) {
    assert.is(costOf(pattern).rereadPerMatch, 0, pattern);
  }
});

test("assertions count as RE2 evaluates them, between the characters on either side", () => {
  assert.is(costOf("\\b").matchesEmpty, true);
  assert.is(costOf("x*y|\\b").matchesEmpty, true);
  assert.is(costOf("(?m)^abc$").matchesEmpty, false);
  // The trailing \b ends the preferred counter exactly where the match ends: nothing is read again.
  assert.is(costOf("\\b[A-Z]{2}\\d{2}[A-Z0-9]{11,30}\\b").rereadPerMatch, 0);
  // `a\w*` reads on past the shorter `a`, but wherever it stops a word ends, and it matches there.
  assert.is(costOf("a\\w*\\b|a").rereadPerMatch, 0);
  // `x\w+y` can outlive a match of `x\b` by the one character that ends the word.
  assert.is(costOf("x\\b|x\\w+y").rereadPerMatch, 1);
});

test("work per character is what the limit holds: live instructions × (2 + characters read again per match)", () => {
  assert.is(workPerCharacter(costOf("[a-z]{1,16}[0-9]")), 64);
  assert.is(workPerCharacter(costOf("a[a-z]{0,7}b|a")), 63);
  assert.is(MAX_WORK_PER_CHARACTER, 64);
  for (const pattern of [
    "[a-z]{1,16}[0-9]",
    "a[a-z]{0,7}b|a",
    "HERMES-[0-9]{3}",
    "(?i)\\b(?:alpha|bravo|charlie|delta|echo|foxtrot|golf|hotel|india|juliet)\\b",
  ]) {
    checkPatternCost(RE2JS.compile(pattern), "content_filters[0]");
  }
  assert.match(
    refusal(() => checkPatternCost(RE2JS.compile("[a-z]{1,17}[0-9]"), "content_filters[0]")),
    /content_filters\[0\]\.pattern costs too much to run: .* 68 steps per character; the limit is 64 steps per character/,
  );
  assert.match(
    refusal(() => checkPatternCost(RE2JS.compile("a[a-z]{0,8}b|a"), "content_filters[1]")),
    /content_filters\[1\]\.pattern costs too much to run: .*read 8 characters again per match, 70 steps/,
  );
  assert.match(
    refusal(() => checkPatternCost(RE2JS.compile("a.*b|a"), "content_filters[0]")),
    /can run on past a shorter match without end.*the limit is 64 steps per character/,
  );
});

test(
  "the 17-character pattern that held the event loop for seconds is refused, naming the limit; " +
    "the pattern is never quoted",
  () => {
    const message = refusal(() => checkCustomFilter({ pattern: "[a-z]{1,900}[0-9]", action: "redact" }, 3));
    assert.match(
      message,
      new RegExp(
        `content_filters\\[3\\]\\.pattern compiles to 1802 RE2 instructions, ` +
          `over the limit of ${MAX_PATTERN_INSTRUCTIONS}`,
      ),
    );
    assert.not.ok(message.includes("[a-z]{1,900}[0-9]"), message);
  },
);

test("checking a pattern's cost is bounded work too, per pattern and per guardrail", () => {
  assert.match(
    refusal(() => checkPatternCost(RE2JS.compile("(?:a|b)*a(?:a|b){12}"), "content_filters[0]")),
    /too complex to check: checking its cost takes more than 1,000,000 steps/,
  );
  assert.is(MAX_ANALYSIS_STEPS, 1_000_000);
  // Each of these fits the per-pattern bound (about 200,000 steps: an `AKIA` can start inside the
  // 16 characters of another), but a dozen of them do not fit the guardrail's.
  const budget = new AnalysisBudget();
  const accepted: number[] = [];
  const refused = refusal(() => {
    for (let index = 0; index < 12; index++)
      accepted.push(checkCustomFilter({ pattern: "AKIA[0-9A-Z]{16}", action: "block" }, index, budget) && index);
  });
  assert.ok(accepted.length >= 5 && accepted.length < 12, `${accepted.length} accepted`);
  assert.match(
    refused,
    new RegExp(
      "checking the cost of the guardrail's custom patterns takes more than " +
        `${MAX_GUARDRAIL_ANALYSIS_STEPS.toLocaleString("en-US")} steps in all`,
    ),
  );
  assert.ok(budget.left < 0);
});

test.run();
