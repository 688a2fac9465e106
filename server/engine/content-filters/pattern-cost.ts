import type { RE2JS } from "re2js";

/**
 * What a compiled custom pattern costs to run, read from the program re2js compiled it to (an NFA
 * of instructions), as counts of work rather than time:
 *
 * - `liveInstructions`: how many instructions RE2's NFA can hold in its queue at once. The matcher
 *   that finds where matches are (redaction needs that) steps through its queue on every character,
 *   so this is its work per character. Counted repetition multiplies it: `[a-z]{1,30}[0-9]` keeps
 *   60 live on a run of letters, where `[a-z]+[0-9]` keeps 3.
 * - `rereadPerMatch`: how many characters redaction can read again for each match. A search settles
 *   on a match only once every thread it prefers (a longer alternative still running, as `a.*b` in
 *   `a.*b|a`) has ended, and the next search starts at the match's end: when that next search can
 *   match before those threads end, the same stretch is read once per match. `a.*b|a` takes minutes
 *   on 64 KiB of `a` (Infinity here); `BEGIN.*END` reads past its match too, but no next match can
 *   end there (the longer alternative would have taken it), so it reads that stretch twice at most
 *   (0 here).
 * - `matchesEmpty`: whether some match can be empty (`\b`, `x*`): such a match redacts nothing,
 *   and a pattern without one needs only RE2's DFA to tell whether a text holds a match.
 *
 * They come from running RE2's own search (re2js's Machine) over every text at once (`simulate`).
 */
export interface PatternCost {
  instructions: number;
  liveInstructions: number;
  rereadPerMatch: number;
  matchesEmpty: boolean;
}

/** re2js's instruction codes (Inst in its sources). */
const ALT = 1;
const ALT_MATCH = 2;
const CAPTURE = 3;
const EMPTY_WIDTH = 4;
const MATCH = 6;
const NOP = 7;
const RUNE = 8;
const RUNE1 = 9;
const RUNE_ANY = 10;
const RUNE_ANY_NOT_NL = 11;

/** The parts of re2js's program this file reads; its typings declare the program `any`. */
interface Instruction {
  op: number;
  out: number;
  arg: number;
  matchRune(rune: number): boolean;
}

/** In a closure, after the rune positions (indexes ≥ 0): the program's match. */
const MATCHED = -1;
/** The rune before the text's first character and after its last, as re2js writes them. */
const NO_RUNE = -1;

export function patternCost(re: RE2JS, budget = new AnalysisBudget()): PatternCost {
  const program = programOf(re);
  const work = new Work(budget);
  const closures = new Closures(program.inst, work);
  const letters = lettersOf(
    re,
    closures.runes.map((pc) => program.inst[pc]!),
    work,
  );
  const search: Search = { start: program.start, closures, letters, ...kindsOf(program.inst), work };
  const instructions = program.inst.length;
  const contexts = [NO_RUNE, ...letters.map((letter) => letter.rune)];
  const matchesEmpty = contexts.some((before) =>
    contexts.some((after) => closures.of(program.start, before, after).includes(MATCHED)),
  );
  if (matchesEmpty)
    return {
      instructions,
      liveInstructions: closures.reach(program.start, NO_RUNE, NO_RUNE).length,
      rereadPerMatch: Number.POSITIVE_INFINITY,
      matchesEmpty,
    };
  return { instructions, ...simulate(search), matchesEmpty };
}

function programOf(re: RE2JS): { inst: Instruction[]; start: number } {
  const prog: unknown = re.re2().prog;
  if (typeof prog !== "object" || prog === null || !("inst" in prog) || !("start" in prog))
    throw new Error("re2js changed: no compiled program");
  const { inst, start } = prog;
  if (!Array.isArray(inst) || typeof start !== "number") throw new Error("re2js changed: unexpected program");
  for (const item of inst as unknown[]) {
    if (
      typeof item !== "object" ||
      item === null ||
      !("op" in item) ||
      typeof item.op !== "number" ||
      item.op < ALT ||
      item.op > RUNE_ANY_NOT_NL
    ) {
      // Lookbehinds (ops 12, 13) need a flag the filters never set.
      throw new Error("re2js changed: unknown instruction");
    }
  }
  return { inst: inst as Instruction[], start };
}

/** re2js's Utils.emptyOpContext: which assertions hold between two runes. */
function context(before: number, after: number): number {
  let holds = 0;
  if (before === NO_RUNE) holds |= 4 | 1;
  if (before === 10) holds |= 1;
  if (after === NO_RUNE) holds |= 8 | 2;
  if (after === 10) holds |= 2;
  return holds | (isWordRune(before) === isWordRune(after) ? 32 : 16);
}

function isWordRune(rune: number): boolean {
  return (rune >= 48 && rune <= 57) || (rune >= 65 && rune <= 90) || (rune >= 97 && rune <= 122) || rune === 95;
}

/**
 * What RE2 adds to its queue when it starts a thread at an instruction, between two runes (which
 * decide the assertions): `of` lists the rune positions reached (their index among the program's
 * rune instructions) in RE2's order of preference (an alternation's first branch first), then
 * MATCHED if the program's match is reached, where RE2 ends every thread it prefers less; `reach`
 * lists every instruction added, branches and captures included, which is RE2's work for it.
 */
class Closures {
  readonly runes: number[];
  private readonly indexOf: Map<number, number>;
  private readonly closures = new Map<number, number[]>();
  private readonly reaches = new Map<number, number[]>();

  constructor(
    private readonly inst: readonly Instruction[],
    private readonly work: Work,
  ) {
    this.runes = inst.flatMap(({ op }, pc) => (op >= RUNE && op <= RUNE_ANY_NOT_NL ? [pc] : []));
    this.indexOf = new Map(this.runes.map((pc, index) => [pc, index]));
  }

  of(pc: number, before: number, after: number): number[] {
    const key = pc * 64 + context(before, after);
    let items = this.closures.get(key);
    if (items === undefined) {
      items = [];
      let matched = false;
      for (const at of this.walk(pc, context(before, after))) {
        const { op } = this.inst[at]!;
        if (op === MATCH) matched = true;
        else if (op >= RUNE && !matched) items.push(this.indexOf.get(at)!);
      }
      if (matched) items.push(MATCHED);
      this.closures.set(key, items);
    }
    return items;
  }

  /** The thread at rune position `index` after it reads `before`, with `after` next. */
  next(index: number, before: number, after: number): number[] {
    return this.of(this.inst[this.runes[index]!]!.out, before, after);
  }

  reach(pc: number, before: number, after: number): number[] {
    const key = pc * 64 + context(before, after);
    let reached = this.reaches.get(key);
    if (reached === undefined) {
      reached = this.walk(pc, context(before, after));
      this.reaches.set(key, reached);
    }
    return reached;
  }

  nextReach(index: number, before: number, after: number): number[] {
    return this.reach(this.inst[this.runes[index]!]!.out, before, after);
  }

  /** Machine.add: depth first, an alternation's `out` before its `arg`, each instruction once. */
  private walk(from: number, holds: number): number[] {
    const order: number[] = [];
    const seen = new Set<number>();
    const stack = [from];
    while (stack.length > 0) {
      const pc = stack.pop()!;
      if (pc === 0 || seen.has(pc)) continue;
      seen.add(pc);
      order.push(pc);
      const { op, out, arg } = this.inst[pc]!;
      if (op === ALT || op === ALT_MATCH) stack.push(arg, out);
      else if (op === CAPTURE || op === NOP || (op === EMPTY_WIDTH && (arg & ~holds) === 0)) stack.push(out);
    }
    this.work.spend(order.length);
    return order;
  }
}

/** A kind of character the program tells apart: a representative rune, and which rune positions take it. */
interface Letter {
  rune: number;
  takes: boolean[];
}

/**
 * re2js's own partition of the code points (every instruction takes all of a class or none of it;
 * newlines and word characters apart, for the assertions), one representative each, and classes
 * that the instructions and the assertions treat alike merged.
 */
function lettersOf(re: RE2JS, runes: readonly Instruction[], work: Work): Letter[] {
  const seen = new Set<string>();
  const letters: Letter[] = [];
  for (const rune of [0, ...re.re2().dfa.classBounds]) {
    work.spend(runes.length);
    const takes = runes.map((inst) => takesRune(inst, rune));
    const key = `${rune === 10}${isWordRune(rune)}${takes.map(Number).join("")}`;
    if (seen.has(key)) continue;
    seen.add(key);
    letters.push({ rune, takes });
  }
  return letters;
}

function takesRune(inst: Instruction, rune: number): boolean {
  if (inst.op === RUNE_ANY) return true;
  if (inst.op === RUNE_ANY_NOT_NL) return rune !== 10;
  return inst.op === RUNE || inst.op === RUNE1 ? inst.matchRune(rune) : false;
}

/**
 * Steps of this analysis (an instruction visited, a thread moved, a state made) beyond which a
 * pattern is refused as too complex to check: the check runs on the event loop when a guardrail is
 * saved or loaded, so it is bounded too, per pattern and for all of a guardrail's patterns (each
 * 1,000,000 steps takes 50 to 100 ms). `(a|b)*a(a|b){12}` needs more; the patterns of
 * docs/api/content-filters.md need at most about 400,000.
 */
export const MAX_ANALYSIS_STEPS = 1_000_000;
export const MAX_GUARDRAIL_ANALYSIS_STEPS = 2_000_000;

export class TooComplex extends Error {}

/** The analysis steps a guardrail's patterns have left, shared by all of them. */
export class AnalysisBudget {
  left = MAX_GUARDRAIL_ANALYSIS_STEPS;
}

/** The steps one pattern's analysis has left. */
class Work {
  private left = MAX_ANALYSIS_STEPS;

  constructor(private readonly shared: AnalysisBudget) {}

  spend(steps: number): void {
    this.left -= steps;
    this.shared.left -= steps;
    if (this.left < 0)
      throw new TooComplex(`checking its cost takes more than ${MAX_ANALYSIS_STEPS.toLocaleString("en-US")} steps`);
    if (this.shared.left < 0) {
      throw new TooComplex(
        "checking the cost of the guardrail's custom patterns takes more " +
          `than ${MAX_GUARDRAIL_ANALYSIS_STEPS.toLocaleString("en-US")} steps in all`,
      );
    }
  }
}

interface Search {
  start: number;
  closures: Closures;
  letters: readonly Letter[];
  /** What a next character can be, as far as assertions go: a representative rune of each kind. */
  kinds: readonly number[];
  /** The kind of a rune (its index in `kinds`). */
  kindOf: (rune: number) => number;
  work: Work;
}

/**
 * Assertions see only whether a neighbouring character is a newline, a word character or another
 * one (or none): what comes next matters to the search only that far, and not at all without them.
 */
function kindsOf(inst: readonly Instruction[]): Pick<Search, "kinds" | "kindOf"> {
  if (!inst.some(({ op }) => op === EMPTY_WIDTH)) return { kinds: [NO_RUNE], kindOf: () => 0 };
  return { kinds: [10, 97, 32], kindOf: (rune) => (rune === 10 ? 0 : isWordRune(rune) ? 1 : 2) };
}

/**
 * A moment of RE2's search: the queue of threads before it reads a character (rune positions, most
 * preferred first, each once), built knowing the kind of that character (which decides assertions:
 * `next`, an index in Search.kinds, or END), and whether a match is found yet.
 */
interface SearchState {
  queue: readonly number[];
  matched: boolean;
  next: number;
  /** The next moments, over every character read; `matches` when a match is found on the way. */
  steps: { target: SearchState; matches: boolean }[];
  /** The runes read just before, when this moment comes right after a match (where the next search starts). */
  afterMatchBy: Set<number>;
}

/** The text ends: nothing more is read. */
const END = -1;

/**
 * RE2's search (Machine.match) over every text at once. Before a match a new thread starts at every
 * character, preferred least; a thread that reaches the match ends every thread it is preferred to;
 * after a match no thread starts, and the search ends when its queue is empty. Moments are followed
 * over every letter until none is new.
 */
function simulate(search: Search): { liveInstructions: number; rereadPerMatch: number } {
  const { closures, letters, kinds, kindOf, start } = search;
  const states = new StateSpace<SearchState>(search.work);
  const stateOf = (queue: readonly number[], matched: boolean, next: number) =>
    states.get(stateKey(queue, matched, next), () => ({ queue, matched, next, steps: [], afterMatchBy: new Set() }));
  let liveInstructions = 0;
  kinds.forEach((rune, kind) => {
    stateOf(closures.of(start, NO_RUNE, rune), false, kind);
    liveInstructions = Math.max(liveInstructions, closures.reach(start, NO_RUNE, rune).length);
  });
  for (const state of states.pending()) {
    if (state.next === END) continue;
    for (const read of letters) {
      if (kindOf(read.rune) !== state.next) continue;
      for (const [next, after] of [...kinds.entries(), [END, NO_RUNE]]) {
        const { queue, matches, live } = stepOf(state, read, after!, search);
        liveInstructions = Math.max(liveInstructions, live);
        const target = stateOf(queue, state.matched || matches, next!);
        if (matches) target.afterMatchBy.add(read.rune);
        state.steps.push({ target, matches });
      }
    }
  }
  const endings = new Endings(states);
  const settled = [...states.all()].filter((state) => state.afterMatchBy.size > 0 && endings.canEnd(state));
  const rereadPerMatch = overrun(settled, search, (queue, next) => {
    const state = states.find(stateKey(queue, true, next));
    // A moment the search never reached cannot be told apart: assume the worst.
    return state === undefined ? Number.POSITIVE_INFINITY : endings.longest(state);
  });
  return { liveInstructions, rereadPerMatch };
}

function stateKey(queue: readonly number[], matched: boolean, next: number): string {
  return `${matched ? "m" : "s"}${next}:${queue}`;
}

/**
 * After a match, the search settles on it only if the threads it prefers all end without a match
 * (they die, or the text ends); one that matches makes a longer match the one the search returns.
 * `canEnd`: whether the search can end so from a moment; `longest`: the most characters it reads
 * before it does (Infinity when it can go round a loop and still end so).
 */
class Endings {
  private readonly ending = new Set<SearchState>();
  private readonly lengths = new Map<SearchState, number>();
  private readonly onPath = new Set<SearchState>();

  constructor(states: StateSpace<SearchState>) {
    // Backwards from the moments where a search after a match ends, over steps that find no match.
    const before = new Map<SearchState, SearchState[]>();
    const pending: SearchState[] = [];
    for (const state of states.all()) {
      if (!state.matched) continue;
      if (state.queue.length === 0 || state.next === END) pending.push(state);
      for (const { target, matches } of state.steps)
        if (!matches) before.set(target, [...(before.get(target) ?? []), state]);
    }
    for (let state = pending.pop(); state !== undefined; state = pending.pop()) {
      if (this.ending.has(state)) continue;
      this.ending.add(state);
      pending.push(...(before.get(state) ?? []));
    }
  }

  canEnd(state: SearchState): boolean {
    return this.ending.has(state);
  }

  /** -Infinity when the search cannot end from `state` without a match. */
  longest(state: SearchState): number {
    if (!this.ending.has(state)) return Number.NEGATIVE_INFINITY;
    if (state.queue.length === 0 || state.next === END) return 0;
    const known = this.lengths.get(state);
    if (known !== undefined) return known;
    if (this.onPath.has(state)) return Number.POSITIVE_INFINITY;
    this.onPath.add(state);
    let longest = 0;
    for (const { target, matches } of state.steps)
      if (!matches && this.ending.has(target)) longest = Math.max(longest, 1 + this.longest(target));
    this.onPath.delete(state);
    this.lengths.set(state, longest);
    return longest;
  }
}

/** States by key, each made once, handed out for exploring as they are made. */
class StateSpace<T> {
  private readonly states = new Map<string, T>();
  private readonly queue: T[] = [];

  constructor(private readonly work: Work) {}

  get(key: string, make: () => T): T {
    let state = this.states.get(key);
    if (state === undefined) {
      this.work.spend(key.length);
      state = make();
      this.states.set(key, state);
      this.queue.push(state);
    }
    return state;
  }

  *pending(): Generator<T> {
    while (this.queue.length > 0) yield this.queue.pop()!;
  }

  find(key: string): T | undefined {
    return this.states.get(key);
  }

  all(): IterableIterator<T> {
    return this.states.values();
  }
}

/**
 * Machine.step on one character (`read`, with `after` next): each thread that takes it, in order
 * of preference, moves to its next positions; reaching the match ends the threads after it; before
 * a match a new thread starts, preferred least. `live` is the size of RE2's queue for the next
 * character: every instruction the moving threads add (those after a match are cut only when the
 * match is reached) and the new thread's.
 */
function stepOf(
  state: { queue: readonly number[]; matched: boolean },
  read: Letter,
  after: number,
  { closures, start, work }: Search,
): { queue: number[]; matches: boolean; live: number } {
  work.spend(state.queue.length);
  const moved: number[] = [];
  const present = new Set<number>();
  const live = new Set<number>();
  let matches = false;
  for (const thread of state.queue) {
    if (!read.takes[thread]) continue;
    for (const pc of closures.nextReach(thread, read.rune, after)) live.add(pc);
    if (matches) continue;
    for (const item of closures.next(thread, read.rune, after)) {
      if (item === MATCHED) matches = true;
      else if (!present.has(item)) {
        present.add(item);
        moved.push(item);
      }
    }
  }
  if (!state.matched) {
    for (const pc of closures.reach(start, read.rune, after)) live.add(pc);
    if (!matches)
      for (const item of closures.of(start, read.rune, after))
        if (item !== MATCHED && !present.has(item)) moved.push(item);
  }
  work.spend(live.size);
  return { queue: moved, matches, live: live.size };
}

/**
 * How far past the next search's match the threads preferred to a match can read, at most: each
 * search reads from the last match's end to where its own preferred threads end, so over a text
 * with k matches the searches read n + k × this characters (n + the stretches between matches,
 * when no next search can match before those threads end: 0 here). The preferred threads (the
 * queue just after a match) and a new search started at that match's end are followed together
 * over every text on which the preferred threads find no match (that would be a longer match,
 * which the first search returns instead); `readOn` tells how far the preferred threads can read
 * from a moment and still end without a match.
 */
function overrun(
  settled: readonly SearchState[],
  search: Search,
  readOn: (queue: readonly number[], next: number) => number,
): number {
  const { closures, letters, kinds, kindOf, start } = search;
  type Pair = { first: readonly number[]; second: readonly number[]; next: number };
  const pairs = new StateSpace<Pair>(search.work);
  const pairOf = (first: readonly number[], second: readonly number[], next: number) =>
    pairs.get(`${next}:${first}|${second}`, () => ({ first, second, next }));
  for (const state of settled)
    for (const before of state.afterMatchBy)
      pairOf(state.queue, closures.of(start, before, kinds[state.next]!), state.next);
  let longest = 0;
  for (const { first, second, next } of pairs.pending()) {
    for (const read of letters) {
      if (kindOf(read.rune) !== next) continue;
      for (const [kind, after] of kinds.entries()) {
        const reading = stepOf({ queue: first, matched: true }, read, after, search);
        if (reading.matches || reading.queue.length === 0) continue;
        const searching = stepOf({ queue: second, matched: false }, read, after, search);
        if (!searching.matches) pairOf(reading.queue, searching.queue, kind);
        else longest = Math.max(longest, readOn(reading.queue, kind));
        if (longest === Number.POSITIVE_INFINITY) return longest;
      }
    }
  }
  return longest;
}
