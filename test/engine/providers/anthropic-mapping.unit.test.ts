import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { dataUrl, sourceOfMediaUrl } from "../../../server/engine/providers/media-source.js";
import { finishReasonOf, stopReasonOf } from "../../../server/engine/providers/anthropic/stop-reasons.js";
import { anthropicToolChoiceType, chatToolChoice } from "../../../server/engine/providers/anthropic/tool-choice.js";
import {
  anthropicTokens,
  anthropicUsageJson,
  tokensOfChatUsage,
} from "../../../server/engine/providers/anthropic/usage.js";
import { chatUsageJson } from "../../../server/engine/providers/cache-split-usage.js";

/**
 * The one Anthropic ↔ chat stop-reason table, tool-choice table, media sources and usage mapping,
 * pinned in both directions.
 */
const test = suite("providers: Anthropic stop reasons and usage");

test("every documented stop_reason has its chat finish_reason", () => {
  const table = [
    "end_turn",
    "stop_sequence",
    "pause_turn",
    "max_tokens",
    "model_context_window_exceeded",
    "tool_use",
    "refusal",
  ].map((s) => [s, finishReasonOf(s)]);
  assert.equal(table, [
    ["end_turn", "stop"],
    ["stop_sequence", "stop"],
    ["pause_turn", "stop"],
    ["max_tokens", "length"],
    ["model_context_window_exceeded", "length"],
    ["tool_use", "tool_calls"],
    ["refusal", "content_filter"],
  ]);
  assert.is(finishReasonOf("a_reason_added_later"), "stop");
  assert.is(finishReasonOf("toString"), "stop");
});

test("a chat finish_reason goes back to its first stop_reason; Anthropic's own reason wins", () => {
  const back = ["stop", "length", "tool_calls", "content_filter", "function_call", "toString"].map((f) => [
    f,
    stopReasonOf({ finish_reason: f }),
  ]);
  assert.equal(back, [
    ["stop", "end_turn"],
    ["length", "max_tokens"],
    ["tool_calls", "tool_use"],
    ["content_filter", "refusal"],
    ["function_call", "end_turn"],
    ["toString", "end_turn"],
  ]);
  for (const native of ["stop_sequence", "pause_turn", "model_context_window_exceeded"]) {
    assert.is(stopReasonOf({ finish_reason: finishReasonOf(native), native_finish_reason: native }), native);
  }
  // Another provider's native reason is not Anthropic's.
  assert.is(stopReasonOf({ finish_reason: "length", native_finish_reason: "MAX_TOKENS" }), "max_tokens");
  assert.is(stopReasonOf({ finish_reason: null }), null);
});

test("usage: cache reads and writes move in and out of prompt_tokens, both ways", () => {
  const tokens = anthropicTokens({
    input_tokens: 10,
    cache_read_input_tokens: 5,
    cache_creation_input_tokens: 3,
    output_tokens: 7,
  });
  const chat = chatUsageJson(tokens);
  assert.equal(chat, {
    prompt_tokens: 18,
    completion_tokens: 7,
    total_tokens: 25,
    prompt_tokens_details: { cached_tokens: 5, cache_write_tokens: 3 },
    completion_tokens_details: { reasoning_tokens: 0 },
  });
  assert.equal(tokensOfChatUsage(chat), tokens);
  assert.equal(anthropicUsageJson(tokens), {
    input_tokens: 10,
    output_tokens: 7,
    cache_read_input_tokens: 5,
    cache_creation_input_tokens: 3,
  });
  // message_delta repeats only what it knows.
  assert.equal(anthropicTokens({ output_tokens: 9 }, tokens), { ...tokens, output: 9 });
  assert.equal(tokensOfChatUsage(undefined), { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 });
});

test("tool_choice: auto, none and required are auto, none and any, both ways", () => {
  assert.equal(["auto", "none", "required", "any", "toString"].map(anthropicToolChoiceType), [
    "auto",
    "none",
    "any",
    undefined,
    undefined,
  ]);
  assert.equal(["auto", "none", "any", "required", "tool"].map(chatToolChoice), [
    "auto",
    "none",
    "required",
    undefined,
    undefined,
  ]);
});

test("media: a data: URL is a base64 source and back; http(s) URLs stay URLs", () => {
  const source = sourceOfMediaUrl("data:image/png;base64,iVBO");
  assert.equal(source, { type: "base64", media_type: "image/png", data: "iVBO" });
  assert.is(dataUrl("image/png", "iVBO"), "data:image/png;base64,iVBO");
  assert.equal(sourceOfMediaUrl("https://example.com/a.png"), { type: "url", url: "https://example.com/a.png" });
  assert.is(sourceOfMediaUrl("ftp://example.com/a.png"), undefined);
  assert.is(sourceOfMediaUrl("data:image/png,plain"), undefined);
});

test.run();
