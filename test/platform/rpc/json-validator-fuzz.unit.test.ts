import * as assert from "uvu/assert";
import type { DescMessage, JsonObject, JsonValue } from "@bufbuild/protobuf";
import { suite } from "../../support/suite.js";
import {
  ACCEPTED,
  camel,
  compiled,
  expected,
  meaning,
  nested,
  SCHEMAS,
  UUID,
  VALID,
} from "./json-validator-fixture.js";

/**
 * A seeded fuzz of mutated valid bodies (json-validator-fixture.ts's): the compiled JSON validator
 * must answer as the two-step path does, and what it accepts must keep its meaning once normalized.
 */
const test = suite("compiled JSON validator: fuzz");

/** mulberry32: a small deterministic generator, so that a failure replays. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Every field name of the schemas, both spellings, and names no message has. */
function namesOf(schemas: DescMessage[]): string[] {
  const names = new Set<string>(["metadata", "cache_control", "x", "odd key", "k\u0000", "\ud800", "", "0", "type"]);
  const seen = new Set<DescMessage>();
  const visit = (schema: DescMessage) => {
    if (seen.has(schema) || schema.typeName.startsWith("google.")) return;
    seen.add(schema);
    for (const field of schema.fields) {
      names.add(field.name).add(field.jsonName);
      const message =
        field.fieldKind === "message" || field.fieldKind === "list" || field.fieldKind === "map"
          ? field.message
          : undefined;
      if (message) visit(message);
    }
  };
  schemas.forEach(visit);
  return [...names];
}

const LEAVES: JsonValue[] = [
  "",
  "x",
  "a\u0000b",
  "\ud800",
  "a\udc00b",
  "😀",
  "😀".repeat(300),
  "s".repeat(513),
  "user",
  "assistant",
  "tool",
  "system",
  "function",
  "price",
  "deny",
  "float",
  "base64",
  "monthly",
  "us",
  "mars",
  "openai",
  "flag",
  "0",
  "12",
  "-5",
  "007",
  "-0",
  "1.5",
  "abc",
  "9007199254740993",
  "4294967296",
  "-2147483649",
  UUID,
  "https://x.example",
  "http://x",
  "0.5",
  "2030-12-31T23:59:59Z",
  "tomorrow",
  "AAAA",
  "!!!",
  "f-1",
  "a b",
  0,
  -0,
  1,
  -1,
  2.5,
  1e300,
  2147483648,
  -2147483649,
  9007199254740992,
  100,
  21,
  513,
  -2.5,
  true,
  false,
  null,
  Number.NaN,
];

function pick<T>(rng: () => number, items: readonly T[]): T {
  return items[Math.floor(rng() * items.length)]!;
}

function randomValue(rng: () => number, names: string[], depth: number): JsonValue {
  const roll = rng();
  if (roll < 0.04) return nested(94 + Math.floor(rng() * 6));
  if (depth < 3 && roll < 0.2) {
    const object: JsonObject = {};
    for (let i = Math.floor(rng() * 3); i > 0; i--) object[pick(rng, names)] = randomValue(rng, names, depth + 1);
    return object;
  }
  if (depth < 3 && roll < 0.32)
    return Array.from({ length: Math.floor(rng() * 3) }, () => randomValue(rng, names, depth + 1));
  if (roll < 0.36) return { role: "user", content: randomValue(rng, names, depth + 1) };
  return pick(rng, LEAVES);
}

/** Every object and array of a body. */
function containers(value: JsonValue, into: Array<JsonObject | JsonValue[]> = []): Array<JsonObject | JsonValue[]> {
  if (value !== null && typeof value === "object") {
    into.push(value);
    for (const child of Array.isArray(value) ? value : Object.values(value)) containers(child, into);
  }
  return into;
}

function mutate(rng: () => number, body: JsonObject, names: string[]): void {
  const target = pick(rng, containers(body));
  if (Array.isArray(target)) {
    const i = Math.floor(rng() * (target.length + 1));
    const roll = rng();
    const at = Math.min(i, target.length - 1);
    if (typeof target[at] === "string" && roll < 0.2) target[at] += pick(rng, ["\u0000", "\ud800"]);
    else if (roll < 0.2 && target.length > 0) target.splice(at, 1);
    else if (roll < 0.35) target.splice(i, 0, randomValue(rng, names, 1));
    else if (target.length > 0) target[at] = roll < 0.45 ? null : randomValue(rng, names, 1);
    return;
  }
  const keys = Object.keys(target);
  const key = keys.length > 0 && rng() < 0.7 ? pick(rng, keys) : pick(rng, names);
  const roll = rng();
  const current = target[key];
  if (typeof current === "string" && roll < 0.3) target[key] = current + pick(rng, ["\u0000", "\ud800", "😀"]);
  else if (roll < 0.15) delete target[key];
  else if (roll < 0.25) target[key] = null;
  else if (roll < 0.4 && key in target) {
    // The other spelling of the name, sometimes beside the first.
    const other = camel(key) === key ? key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) : camel(key);
    target[other] = rng() < 0.5 ? target[key]! : randomValue(rng, names, 1);
    if (rng() < 0.5) delete target[key];
  } else target[key] = randomValue(rng, names, 1);
}

test("a seeded fuzz of mutated valid bodies: the same answer as the two-step path", () => {
  const rng = random(0x5eed);
  const names = namesOf(SCHEMAS);
  const mismatches: string[] = [];
  let accepted = 0;
  let runs = 0;
  for (let round = 0; round < 300; round++) {
    for (const [label, schema, valid] of VALID) {
      const body = structuredClone(valid);
      for (let n = 1 + Math.floor(rng() * 3); n > 0; n--) mutate(rng, body, names);
      runs++;
      const want = expected(schema, body);
      const { outcome, normalized } = compiled(schema, body);
      if (outcome !== want) {
        mismatches.push(`${label} #${round}: ${JSON.stringify(body)}\n  want ${want}\n  got  ${outcome}`);
        continue;
      }
      if (outcome !== ACCEPTED) continue;
      accepted++;
      const same = JSON.stringify(meaning(schema, normalized)) === JSON.stringify(meaning(schema, body));
      const again = compiled(schema, normalized);
      if (!same || again.outcome !== ACCEPTED || JSON.stringify(again.normalized) !== JSON.stringify(normalized)) {
        mismatches.push(`${label} #${round}: normalized ${JSON.stringify(normalized)} of ${JSON.stringify(body)}`);
      }
    }
  }
  assert.ok(runs >= 3000, `${runs} runs`);
  assert.ok(accepted > runs / 10 && accepted < runs * 0.9, `${accepted} of ${runs} accepted: the fuzz should mix both`);
  assert.equal(mismatches.slice(0, 5), [], `${mismatches.length} mismatches`);
});

test.run();
