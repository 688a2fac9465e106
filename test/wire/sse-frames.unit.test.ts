import type { JsonValue } from "@bufbuild/protobuf";
import * as assert from "uvu/assert";
import { jsonEventFrames, SSE_DONE, type SseCarrier, TEXT_FRAMES } from "../../wire/sse-frames.js";
import { suite } from "../support/suite.js";

/**
 * The one framing loop of wire/sse-frames.ts, which the facade (its server streams) and the
 * inference JSON methods (server/services/inference/json-methods.ts) both run.
 */
const test = suite("SSE frames");

async function* items<T>(...values: T[]): AsyncGenerator<T> {
  yield* values;
}

async function collect<C>(frames: AsyncIterable<C>): Promise<C[]> {
  const out: C[] = [];
  for await (const frame of frames) out.push(frame);
  return out;
}

test("unnamed events: one data frame each, then [DONE]", async () => {
  const frames = await collect(jsonEventFrames(items<JsonValue>({ a: 1 }, { type: "x" }), false, TEXT_FRAMES));
  assert.equal(frames, ['data: {"a":1}\n\n', 'data: {"type":"x"}\n\n', SSE_DONE]);
});

test("named events: named after their type, no [DONE]; a name with a line break is left out", async () => {
  const frames = await collect(
    jsonEventFrames(items<JsonValue>({ type: "message_start" }, { type: "a\nb" }, [1]), true, TEXT_FRAMES),
  );
  assert.equal(frames, [
    'event: message_start\ndata: {"type":"message_start"}\n\n',
    'data: {"type":"a\\nb"}\n\n',
    "data: [1]\n\n",
  ]);
});

type Item = { whole?: string; value: JsonValue };
const tagged: SseCarrier<Item, string> = {
  event: (item) => item.value,
  chunk: (frame, first) => `${first ? "first " : ""}${frame}`,
  whole: (item) => item.whole,
};

test("the carrier is told the first chunk, [DONE] included when it is the only one", async () => {
  assert.equal(await collect(jsonEventFrames(items<Item>({ value: 1 }, { value: 2 }), false, tagged)), [
    "first data: 1\n\n",
    "data: 2\n\n",
    SSE_DONE,
  ]);
  assert.equal(await collect(jsonEventFrames(items<Item>(), false, tagged)), [`first ${SSE_DONE}`]);
});

test("a whole answer is the stream's one chunk and ends it", async () => {
  const frames = await collect(jsonEventFrames(items<Item>({ whole: "reply", value: 0 }, { value: 1 }), false, tagged));
  assert.equal(frames, ["reply"]);
});

test.run();
