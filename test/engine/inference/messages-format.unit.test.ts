import { ConnectError } from "@connectrpc/connect";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { httpErrorOf } from "../../../wire/errors.js";
import { chatToMessage, messagesToChat } from "../../../server/engine/inference/formats/messages-format.js";
import { chatStreamToMessageEvents } from "../../../server/engine/inference/formats/messages-stream.js";
import { chunk, chunks, collect, completion, IDS, throws400, usageChunk } from "./formats-fixture.js";

/** The pure translators between the Messages format and chat completions, requests, answers and streams. */
const test = suite("api format translators: Messages");

test("messagesToChat: every supported request field", () => {
  const chat = messagesToChat({
    model: "mock/claude",
    max_tokens: 200,
    system: [{ type: "text", text: "Be brief", cache_control: { type: "ephemeral" } }],
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: "Look" },
          { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
          { type: "image", source: { type: "url", url: "https://x/cat.png" } },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "hm", signature: "s" },
          { type: "text", text: "Calling" },
          { type: "tool_use", id: "t1", name: "f", input: { a: 1 } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: "one" }] },
          { type: "text", text: "and?" },
        ],
      },
    ],
    stop_sequences: ["END"],
    temperature: 0.2,
    top_p: 0.8,
    top_k: 5,
    tools: [{ name: "f", description: "F", input_schema: { type: "object" } }],
    tool_choice: { type: "tool", name: "f", disable_parallel_tool_use: true },
    metadata: { user_id: "u1" },
    thinking: { type: "enabled", budget_tokens: 1024 },
    stream: true,
    provider: { only: ["mockanthropic"] },
  });
  assert.equal(chat, {
    messages: [
      { role: "system", content: [{ type: "text", text: "Be brief", cache_control: { type: "ephemeral" } }] },
      {
        role: "user",
        content: [
          { type: "text", text: "Look" },
          { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
          { type: "image_url", image_url: { url: "https://x/cat.png" } },
        ],
      },
      {
        role: "assistant",
        content: "Calling",
        tool_calls: [{ id: "t1", type: "function", function: { name: "f", arguments: '{"a":1}' } }],
      },
      { role: "tool", tool_call_id: "t1", content: [{ type: "text", text: "one" }] },
      { role: "user", content: [{ type: "text", text: "and?" }] },
    ],
    max_tokens: 200,
    model: "mock/claude",
    temperature: 0.2,
    top_p: 0.8,
    top_k: 5,
    stream: true,
    stop: ["END"],
    tools: [{ type: "function", function: { name: "f", parameters: { type: "object" }, description: "F" } }],
    tool_choice: { type: "function", function: { name: "f" } },
    parallel_tool_calls: false,
    user: "u1",
    reasoning: { max_tokens: 1024 },
    provider: { only: ["mockanthropic"] },
  });
});

test("messagesToChat: bad input names the field", () => {
  throws400(() => messagesToChat({ messages: [{ role: "user", content: "x" }] }), /^max_tokens is required/);
  throws400(
    () => messagesToChat({ max_tokens: 1.5, messages: [{ role: "user", content: "x" }] }),
    /^max_tokens must be an integer/,
  );
  throws400(() => messagesToChat({ max_tokens: 1, messages: [] }), /^messages must have at least 1 message/);
  throws400(
    () => messagesToChat({ max_tokens: 1, messages: [{ role: "user" }] }),
    /^messages\[0\]\.content is required/,
  );
  throws400(
    () => messagesToChat({ max_tokens: 1, messages: [{ role: "user", content: [{ type: "tool_result" }] }] }),
    /^messages\[0\]\.content\[0\]\.tool_use_id is required/,
  );
  throws400(
    () => messagesToChat({ max_tokens: 1, messages: [{ role: "assistant", content: [{ type: "image" }] }] }),
    /^messages\[0\]\.content\[0\]\.type "image" is not supported in an assistant message/,
  );
  throws400(
    () => messagesToChat({ max_tokens: 1, messages: [{ role: "user", content: "x" }], system: [{ type: "image" }] }),
    /^system\[0\]\.type must be text/,
  );
  throws400(
    () => messagesToChat({ max_tokens: 1, messages: [{ role: "user", content: "x" }], stop_sequences: [1] }),
    /^stop_sequences\[0\] must be a string/,
  );
  throws400(
    () => messagesToChat({ max_tokens: 1, messages: [{ role: "user", content: "x" }], metadata: { user_id: 7 } }),
    /^metadata\.user_id must be a string/,
  );
});

test("chatToMessage: text and tool_use blocks, stop reasons, usage with cache reads apart", () => {
  const message = chatToMessage(
    completion(
      {
        content: "Sure",
        tool_calls: [{ id: "call_1", type: "function", function: { name: "f", arguments: '{"a":1}' } }],
      },
      "tool_calls",
    ),
    IDS,
  );
  assert.equal(message, {
    id: "gen-1-abc",
    type: "message",
    role: "assistant",
    model: "mock/chat",
    content: [
      { type: "text", text: "Sure" },
      { type: "tool_use", id: "call_1", name: "f", input: { a: 1 } },
    ],
    stop_reason: "tool_use",
    stop_sequence: null,
    usage: { input_tokens: 7, output_tokens: 4, cache_read_input_tokens: 3, cache_creation_input_tokens: 0, cost: 0.5 },
  });
  assert.is(chatToMessage(completion({ content: "Hel" }, "length"), IDS).stop_reason, "max_tokens");
  assert.is(chatToMessage(completion({ content: "x" }, "stop"), IDS).stop_reason, "end_turn");
  // An Anthropic provider's own reason tells a stop sequence from an end of turn.
  assert.is(
    chatToMessage(completion({ content: "x" }, "stop", { native_finish_reason: "stop_sequence" }), IDS).stop_reason,
    "stop_sequence",
  );
});

test("chatStreamToMessageEvents: one block at a time, usage on message_delta", async () => {
  const events = await collect(
    chatStreamToMessageEvents(
      chunks([
        chunk({ role: "assistant", content: "" }),
        chunk({ content: "Hi" }),
        chunk({
          tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "f", arguments: '{"a"' } }],
        }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: ":1}" } }] }),
        chunk({ tool_calls: [{ index: 1, id: "call_2", type: "function", function: { name: "g", arguments: "{}" } }] }),
        chunk({}, "tool_calls"),
        usageChunk,
      ]),
      { createdAt: 1 },
    ),
  );
  assert.equal(events, [
    {
      type: "message_start",
      message: {
        id: "gen-9-xyz",
        type: "message",
        role: "assistant",
        model: "mock/chat",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
      },
    },
    { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hi" } },
    { type: "content_block_stop", index: 0 },
    { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "call_1", name: "f", input: {} } },
    { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"a"' } },
    { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: ":1}" } },
    { type: "content_block_stop", index: 1 },
    { type: "content_block_start", index: 2, content_block: { type: "tool_use", id: "call_2", name: "g", input: {} } },
    { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: "{}" } },
    { type: "content_block_stop", index: 2 },
    {
      type: "message_delta",
      delta: { stop_reason: "tool_use", stop_sequence: null },
      usage: {
        input_tokens: 7,
        output_tokens: 4,
        cache_read_input_tokens: 3,
        cache_creation_input_tokens: 0,
        cost: 0.5,
      },
    },
    { type: "message_stop" },
  ]);
});

test("chatStreamToMessageEvents: a tool call resumed after another has started is a provider failure", async () => {
  const stream = chatStreamToMessageEvents(
    chunks([
      chunk({ tool_calls: [{ index: 0, id: "a", function: { name: "f", arguments: "{" } }] }),
      chunk({ tool_calls: [{ index: 1, id: "b", function: { name: "g", arguments: "{}" } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: "}" } }] }),
    ]),
    { createdAt: 1 },
  );
  try {
    await collect(stream);
    assert.unreachable("expected a failure");
  } catch (err) {
    assert.ok(err instanceof ConnectError, String(err));
    assert.is(httpErrorOf(err).status, 502);
  }
});

test.run();
