import { RE2JS } from "re2js";
import * as assert from "uvu/assert";
import { suite } from "../../support/suite.js";
import { patternCost, TooComplex } from "../../../server/engine/content-filters/pattern-cost.js";
import { workPerCharacter } from "../../../server/engine/content-filters/pattern-limits.js";

/**
 * The cost pattern-cost.ts counts is an upper bound of the work re2js really does: random patterns
 * (a fixed seed) redact random texts while re2js's NFA counts its steps (the threads it steps, one
 * per instruction in its queue, at every character), and the steps per character stay within the
 * counted work. The count hooks re2js's Machine, which the library does not export: it is reached
 * through the machine a matcher leaves in its pool. Texts are long enough for re2js to use that NFA
 * (it runs short texts on a bit-state backtracker).
 */
const test = suite("guardrails: the counted cost of a pattern bounds re2js's work");

const TEXT_LENGTH = 30_000;
const PATTERNS = 25;

/**
 * Every step of re2js's NFA, counted: `Machine.step` walks its run queue once per character. The
 * hook is taken off by `restore` (test files share a worker process).
 */
function countSteps(): { steps: () => number; reset: () => void; restore: () => void } {
  const probe = RE2JS.compile("[ab]c");
  probe.matcher(`${"ab".repeat(150_000)}c`).find();
  const pool = (probe.re2() as unknown as { machinePool: object[] }).machinePool;
  const prototype = Object.getPrototypeOf(pool[0]) as { step: (runq: { size: number }, ...rest: unknown[]) => unknown };
  const step = prototype.step;
  let counted = 0;
  prototype.step = function (this: unknown, runq: { size: number }, ...rest: unknown[]) {
    counted += runq.size;
    return step.call(this, runq, ...rest);
  };
  return {
    steps: () => counted,
    reset: () => (counted = 0),
    restore: () => (prototype.step = step),
  };
}

/** mulberry32, a small seeded generator: the same patterns and texts on every run. */
function random(seed: number): (below: number) => number {
  let state = seed;
  return (below) => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) % below;
  };
}

const ATOMS = ["a", "b", "c", "[ab]", "[a-c]", ".", "(?:a|b)", "(?:ab|a)", "\\w", "\\b", "(?m:^)", "(?m:$)", " "];
const ALPHABETS = ["ab", "abc", "a", "aab", "abcabc ", "a b\n"];

function pattern(next: (below: number) => number, depth: number): string {
  const parts: string[] = [];
  for (let i = 0, length = 1 + next(4); i < length; i++) {
    let atom = depth > 0 && next(3) === 0 ? `(?:${pattern(next, depth - 1)})` : ATOMS[next(ATOMS.length)]!;
    const quantifier = next(8);
    if (quantifier === 0) atom += "*";
    else if (quantifier === 1) atom += "+";
    else if (quantifier === 2) atom += "?";
    else if (quantifier === 3) atom += `{${next(3)},${3 + next(4)}}`;
    else if (quantifier === 4) atom += "*?";
    parts.push(atom);
  }
  return next(3) === 0 ? `${parts.join("")}|${pattern(next, 0)}` : parts.join("");
}

test("re2js's steps per character of a redaction stay within the counted work, over random patterns and texts", () => {
  const { steps, reset, restore } = countSteps();
  try {
    checkPatterns(steps, reset);
  } finally {
    restore();
  }
});

function checkPatterns(steps: () => number, reset: () => void): void {
  const next = random(20_250_101);
  let checked = 0;
  let stepped = 0;
  while (checked < PATTERNS) {
    const source = pattern(next, 2);
    let compiled: RE2JS;
    try {
      compiled = RE2JS.compile(source);
    } catch {
      continue;
    }
    let work: number;
    try {
      work = workPerCharacter(patternCost(compiled));
    } catch (err) {
      if (err instanceof TooComplex) continue;
      throw err;
    }
    if (!Number.isFinite(work)) continue;
    checked++;
    for (const alphabet of ALPHABETS) {
      const text = Array.from({ length: TEXT_LENGTH }, () => alphabet[next(alphabet.length)]).join("");
      reset();
      const matcher = compiled.matcher(text);
      while (matcher.find());
      const perCharacter = steps() / TEXT_LENGTH;
      stepped += steps();
      assert.ok(
        perCharacter <= work,
        `${source} on ${JSON.stringify(alphabet)}: ${perCharacter.toFixed(1)} steps per character, counted ${work}`,
      );
    }
  }
  assert.ok(stepped > 1_000_000, `the NFA was counted: ${stepped} steps`);
}

test.run();
