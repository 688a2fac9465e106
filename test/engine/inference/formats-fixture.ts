import type { JsonObject } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import * as assert from "uvu/assert";
import { httpErrorOf } from "../../../wire/errors.js";

/** What the format translators' unit suites share: a chat completion and its chunks to translate, a 400 to expect. */
export const IDS = { id: "gen-1-abc", createdAt: 1_700_000_000 };
const USAGE = {
  prompt_tokens: 10,
  completion_tokens: 4,
  total_tokens: 14,
  prompt_tokens_details: { cached_tokens: 3 },
  completion_tokens_details: { reasoning_tokens: 1 },
  cost: 0.5,
};

export function throws400(run: () => unknown, message: RegExp): void {
  try {
    run();
  } catch (err) {
    assert.ok(err instanceof ConnectError, String(err));
    const http = httpErrorOf(err);
    assert.is(http.status, 400);
    assert.match(http.message, message);
    return;
  }
  assert.unreachable("expected a 400");
}

export function completion(message: JsonObject, finishReason: string, extra: JsonObject = {}): JsonObject {
  return {
    id: "gen-1-abc",
    object: "chat.completion",
    model: "mock/chat",
    choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: finishReason, ...extra }],
    usage: USAGE,
  };
}

export async function* chunks(list: JsonObject[]): AsyncGenerator<JsonObject> {
  for (const chunk of list) yield chunk;
}

export async function collect(events: AsyncIterable<JsonObject>): Promise<JsonObject[]> {
  const out: JsonObject[] = [];
  for await (const event of events) out.push(event);
  return out;
}

export const chunk = (delta: JsonObject, finishReason: string | null = null): JsonObject => ({
  id: "gen-9-xyz",
  model: "mock/chat",
  choices: [{ index: 0, delta, finish_reason: finishReason }],
});
export const usageChunk: JsonObject = { id: "gen-9-xyz", model: "mock/chat", choices: [], usage: USAGE };
