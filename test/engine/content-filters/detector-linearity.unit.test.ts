import * as assert from "uvu/assert";
import { suite } from "../../support/suite.js";
import { builtinFilter } from "../../../server/engine/content-filters/content-filter.js";
import { DETECTORS } from "../../../server/engine/content-filters/builtin-detectors.js";

/**
 * The built-in detectors are JavaScript regular expressions, which can backtrack: the docs promise
 * they stay linear in the text. V8 does not count a regular expression's steps, so this compares
 * the CPU time of the same work on a text and on one 8 times longer, built alike: linear work takes
 * about 8 times as long, quadratic about 64 times. The ratio is the test, never a duration: the
 * machine's speed cancels out, and the bound (24) leaves room for a busy machine.
 */
const test = suite("guardrails: built-in detectors stay linear");

const SMALL = 8_000;
const SCALE = 8;
const MAX_RATIO = 24;

/** Shapes that almost match, repeated: where a backtracking expression goes quadratic. */
const SHAPES = ["a", "1", "٤", "1-", "+1 ", "1.", "a:", "x@", "a.", "ignore ", "1 ", "ab@c.", "(555) "];

function cpuMicros(run: () => void): number {
  const before = process.cpuUsage();
  run();
  const { user, system } = process.cpuUsage(before);
  return user + system;
}

/** The least CPU time of a few runs: a busy machine only ever adds time. */
function least(run: () => void): number {
  return Math.min(...Array.from({ length: 5 }, () => cpuMicros(run)));
}

test("every detector, matching and redacting, does about 8 times the work on a text 8 times longer", () => {
  for (const slug of DETECTORS.keys()) {
    const filter = builtinFilter("g", { slug, label: "[X]", action: "redact" });
    for (const shape of SHAPES) {
      const small = shape.repeat(Math.ceil(SMALL / shape.length));
      const large = shape.repeat(Math.ceil((SMALL * SCALE) / shape.length));
      const work = (text: string) => () => {
        filter.matches(text);
        filter.redact(text);
      };
      least(work(small)); // warms the regular expression up
      const ratio = least(work(large)) / Math.max(least(work(small)), 1);
      assert.ok(
        ratio < MAX_RATIO,
        `${slug} on ${JSON.stringify(shape)} repeated: ${ratio.toFixed(1)} times the work for ${SCALE} times the text`,
      );
    }
  }
});

test.run();
