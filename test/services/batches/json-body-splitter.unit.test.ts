import { ConnectError } from "@connectrpc/connect";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { JsonBodySplitter, type BodyPart } from "../../../server/services/batches/json-body-splitter.js";

/**
 * The splitter behind streamed batch submissions, on its own: whatever the slicing of a body, the
 * parts it yields put back together are what `JSON.parse` makes of the whole; and whatever the
 * slicing of a malformed body, it is refused.
 */
const test = suite("json body splitter");

/** A small deterministic PRNG (mulberry32), so that a failure can be replayed. */
function random(seed: number): (n: number) => number {
  let state = seed;
  return (n) => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

/** Splits `text` into random slices; returns the parts, or throws as the splitter does. */
function split(text: string, rand: (n: number) => number): BodyPart[] {
  const bytes = Buffer.from(text, "utf8");
  const splitter = new JsonBodySplitter(new Set(["requests"]));
  const parts: BodyPart[] = [];
  for (let at = 0; at < bytes.length; ) {
    const length = 1 + rand(rand(2) ? 4 : 64);
    parts.push(...splitter.write(bytes.subarray(at, at + length)));
    at += length;
  }
  splitter.end();
  return parts;
}

function rebuild(parts: BodyPart[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const part of parts) {
    if (part.kind === "field") out[part.name] = part.value;
    else if (part.kind === "array") out[part.name] = [];
    else (out[part.name] as unknown[]).push(part.value);
  }
  return out;
}

test("any slicing of any body gives back what JSON.parse reads", () => {
  const rand = random(15);
  // Characters that matter to a scanner: quotes, backslashes, brackets, multi-byte UTF-8, controls.
  const alphabet = ["a", '"', "\\", "\n", "é", "😀", "{", "}", "[", "]", ",", ":", " ", "\u0001", "\u2028"];
  const text = () => Array.from({ length: rand(10) }, () => alphabet[rand(alphabet.length)]).join("");
  const value = (depth: number): unknown => {
    switch (rand(depth > 3 ? 5 : 7)) {
      case 0:
        return rand(2000) - 1000 + (rand(2) ? 0.5 : 0);
      case 1:
        return text();
      case 2:
        return rand(2) === 0;
      case 3:
        return null;
      case 4:
        return -1.5e-7 * rand(3);
      case 5:
        return Array.from({ length: rand(4) }, () => value(depth + 1));
      default:
        return Object.fromEntries(Array.from({ length: rand(4) }, () => [text(), value(depth + 1)]));
    }
  };
  for (let round = 0; round < 3000; round++) {
    const body: Record<string, unknown> = {};
    for (const key of ["endpoint", "requests", 'od"d', "model", "provider"]) {
      if (rand(4) === 0) continue;
      body[key] = key === "requests" && rand(4) ? Array.from({ length: rand(6) }, () => value(0)) : value(0);
    }
    const json = rand(2) ? JSON.stringify(body) : JSON.stringify(body, null, 1 + rand(3));
    assert.equal(rebuild(split(json, rand)), JSON.parse(json), json);
  }
});

test("a streamed array's elements come one by one, in order, with their index", () => {
  const parts = split(`{"a":1,"requests":[{"x":"]"},[1],"s",2,null],"b":{"requests":[3]}}`, random(1));
  assert.equal(parts, [
    { kind: "field", name: "a", value: 1 },
    { kind: "array", name: "requests" },
    { kind: "element", name: "requests", index: 0, value: { x: "]" } },
    { kind: "element", name: "requests", index: 1, value: [1] },
    { kind: "element", name: "requests", index: 2, value: "s" },
    { kind: "element", name: "requests", index: 3, value: 2 },
    { kind: "element", name: "requests", index: 4, value: null },
    { kind: "field", name: "b", value: { requests: [3] } },
  ]);
  assert.equal(split("", random(1)), []);
  assert.equal(split(" {} \n", random(1)), []);
});

test("malformed bodies are refused with a 400 that says where, however they are sliced", () => {
  const cases: Array<[string, RegExp]> = [
    ['{"a":1,}', /expected a field name at byte 7, found '}'/],
    ['{"a" 1}', /expected ':' after the field name 'a' at byte 5/],
    ['{"requests":[1,]}', /expected a value at byte 15, found ']'/],
    ['{"requests":[1 2]}', /expected ',' or ']' after requests\[0\] at byte 15, found '2'/],
    ['{"a":1}x', /unexpected data after the end of the JSON object at byte 7/],
    ['{"a":', /the body ends before its JSON object is complete/],
    ['{"requests":[{"a":"b', /the body ends before its JSON object is complete inside requests\[0\]/],
    ['{"a":tru}', /the field 'a' \(from byte 5\): /],
    ['{"a":"\\x"}', /the field 'a' \(from byte 5\): /],
    ['{"requests":[{]}]}', /requests\[0\] \(from byte 13\): /],
    ["{a:1}", /expected a field name at byte 1, found 'a'/],
    ['{"a":1 "b":2}', /expected ',' or '}' after the field 'a' at byte 7/],
    ["[1]", /The request body must be a JSON object/],
    ["  ", /The request body must be a JSON object/],
  ];
  const rand = random(7);
  for (const [body, message] of cases) {
    for (let attempt = 0; attempt < 20; attempt++) {
      try {
        split(body, rand);
        assert.unreachable(`${body} was accepted`);
      } catch (err) {
        assert.instance(err, ConnectError, body);
        assert.match((err as ConnectError).rawMessage, message, body);
      }
    }
  }
});

test.run();
