import type { JsonObject } from "@bufbuild/protobuf";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { chatToResponse, responsesToChat } from "../../../server/engine/inference/formats/responses-format.js";
import { chatStreamToResponseEvents } from "../../../server/engine/inference/formats/responses-stream.js";
import { chunk, chunks, collect, completion, IDS, throws400, usageChunk } from "./formats-fixture.js";

/** The pure translators between the Responses format and chat completions, requests, answers and streams. */
const test = suite("api format translators: Responses");

test("responsesToChat: every supported request field", () => {
  const chat = responsesToChat({
    model: "mock/chat",
    instructions: "Be brief",
    input: [
      {
        role: "user",
        content: [
          { type: "input_text", text: "Look" },
          { type: "input_image", image_url: "https://x/cat.png", detail: "low" },
        ],
      },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Calling" }] },
      { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
      { type: "function_call", call_id: "c2", name: "g", arguments: '{"a":1}' },
      { type: "reasoning", id: "rs_1", summary: [] },
      { type: "function_call_output", call_id: "c1", output: "one" },
      { type: "function_call_output", call_id: "c2", output: [{ type: "input_text", text: "two" }] },
    ],
    max_output_tokens: 50,
    temperature: 0.5,
    top_p: 0.9,
    tools: [
      { type: "function", name: "f", description: "F", parameters: { type: "object" }, strict: true },
      { type: "svc:web_search" },
    ],
    tool_choice: { type: "function", name: "f" },
    parallel_tool_calls: false,
    text: { format: { type: "json_schema", name: "out", schema: { type: "object" }, strict: true } },
    reasoning: { effort: "low", summary: "auto" },
    stream: true,
    user: "u1",
    metadata: { a: "b" },
    store: true,
    provider: { only: ["mockai"] },
    session_id: "s1",
  });
  assert.equal(chat, {
    messages: [
      { role: "system", content: "Be brief" },
      {
        role: "user",
        content: [
          { type: "text", text: "Look" },
          { type: "image_url", image_url: { url: "https://x/cat.png", detail: "low" } },
        ],
      },
      {
        role: "assistant",
        content: [{ type: "text", text: "Calling" }],
        tool_calls: [
          { id: "c1", type: "function", function: { name: "f", arguments: "{}" } },
          { id: "c2", type: "function", function: { name: "g", arguments: '{"a":1}' } },
        ],
      },
      { role: "tool", tool_call_id: "c1", content: "one" },
      { role: "tool", tool_call_id: "c2", content: [{ type: "text", text: "two" }] },
    ],
    model: "mock/chat",
    user: "u1",
    temperature: 0.5,
    top_p: 0.9,
    stream: true,
    parallel_tool_calls: false,
    max_completion_tokens: 50,
    tools: [
      { type: "function", function: { name: "f", description: "F", parameters: { type: "object" }, strict: true } },
      { type: "svc:web_search" },
    ],
    tool_choice: { type: "function", function: { name: "f" } },
    response_format: { type: "json_schema", json_schema: { name: "out", schema: { type: "object" }, strict: true } },
    // Chat's own name; `reasoning.summary` asks for summary items a translated answer never has.
    reasoning_effort: "low",
    // Fields chat has under the same name travel as sent.
    metadata: { a: "b" },
    store: true,
    provider: { only: ["mockai"] },
    session_id: "s1",
  });
});

test("responsesToChat: unsupported input names the field", () => {
  throws400(() => responsesToChat({ input: [] }), /^input must have at least 1 item/);
  throws400(() => responsesToChat({ input: ["text"] }), /^input\[0\] must be an object/);
  throws400(
    () => responsesToChat({ input: [{ type: "item_reference", id: "x" }] }),
    /^input\[0\]\.type "item_reference" is not supported/,
  );
  throws400(() => responsesToChat({ input: [{ role: "tool", content: "x" }] }), /^input\[0\]\.role must be one of/);
  throws400(
    () => responsesToChat({ input: [{ role: "user", content: [{ type: "input_image", file_id: "file_1" }] }] }),
    /^input\[0\]\.content\[0\]\.file_id is not supported/,
  );
  throws400(
    () => responsesToChat({ input: [{ type: "function_call", call_id: "c", arguments: "{}" }] }),
    /^input\[0\]\.name is required/,
  );
  throws400(
    () => responsesToChat({ input: "x", tools: [{ type: "file_search" }] }),
    /^tools\[0\]\.type must be function/,
  );
  throws400(
    () => responsesToChat({ input: "x", tool_choice: { type: "web_search_preview" } }),
    /^tool_choice\.type "web_search_preview" is not supported/,
  );
  throws400(() => responsesToChat({ input: "x", tool_choice: 3 }), /^tool_choice must be/);
  throws400(() => responsesToChat({ input: "x", text: { format: { type: "xml" } } }), /^text\.format\.type must be/);
  throws400(() => responsesToChat({ input: "x", reasoning: { effort: 3 } }), /^reasoning\.effort must be a string/);
  throws400(() => responsesToChat({ input: "x", max_output_tokens: "many" }), /^max_output_tokens must be a number/);
});

test("chatToResponse: text and tool calls as output items, usage in Responses terms", () => {
  const response = chatToResponse(
    completion(
      { content: "Sure", tool_calls: [{ id: "call_1", type: "function", function: { name: "f", arguments: "{}" } }] },
      "tool_calls",
    ),
    IDS,
  );
  assert.equal(response, {
    id: "gen-1-abc",
    object: "response",
    created_at: 1_700_000_000,
    status: "completed",
    error: null,
    incomplete_details: null,
    model: "mock/chat",
    output: [
      {
        id: "msg_gen-1-abc",
        type: "message",
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: "Sure", annotations: [] }],
      },
      {
        id: "fc_gen-1-abc_0",
        type: "function_call",
        status: "completed",
        call_id: "call_1",
        name: "f",
        arguments: "{}",
      },
    ],
    usage: {
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 3 },
      output_tokens: 4,
      output_tokens_details: { reasoning_tokens: 1 },
      total_tokens: 14,
      cost: 0.5,
    },
  });
});

test("chatToResponse: finish_reason length → incomplete; calls only → no message item", () => {
  const cut = chatToResponse(completion({ content: "Hel" }, "length"), IDS);
  assert.is(cut.status, "incomplete");
  assert.equal(cut.incomplete_details, { reason: "max_output_tokens" });
  const calls = chatToResponse(
    completion({ content: null, tool_calls: [{ id: "c", function: { name: "f", arguments: "{}" } }] }, "tool_calls"),
    IDS,
  );
  assert.equal(
    (calls.output as JsonObject[]).map((item) => item.type),
    ["function_call"],
  );
});

test(
  "chatStreamToResponseEvents: " + "numbered events, text and a streamed call, completed with the whole response",
  async () => {
    const events = await collect(
      chatStreamToResponseEvents(
        chunks([
          chunk({ role: "assistant", content: "" }),
          chunk({ content: "Hi" }),
          chunk({ content: " there" }),
          chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "f", arguments: "" } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: "1}" } }] }),
          chunk({}, "tool_calls"),
          usageChunk,
        ]),
        { createdAt: 5 },
      ),
    );
    assert.equal(
      events.map((e) => e.sequence_number),
      events.map((_, i) => i),
    );
    assert.equal(
      events.map((e) => e.type),
      [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
      ],
    );
    assert.is((events[0]!.response as JsonObject).id, "gen-9-xyz", "without ids.id the chunks' id is the response id");
    assert.equal(events[6]!.item, {
      id: "fc_gen-9-xyz_0",
      type: "function_call",
      status: "in_progress",
      call_id: "call_1",
      name: "f",
      arguments: "",
    });
    assert.is(events[12]!.arguments, '{"a":1}');
    const response = events.at(-1)!.response as JsonObject;
    assert.is(response.status, "completed");
    assert.is(response.created_at, 5);
    assert.equal(response.output, [
      {
        id: "msg_gen-9-xyz",
        type: "message",
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: "Hi there", annotations: [] }],
      },
      {
        id: "fc_gen-9-xyz_0",
        type: "function_call",
        status: "completed",
        call_id: "call_1",
        name: "f",
        arguments: '{"a":1}',
      },
    ]);
    assert.is((response.usage as JsonObject).output_tokens, 4);
  },
);

test("chatStreamToResponseEvents: a cut answer ends with response.incomplete", async () => {
  const events = await collect(
    chatStreamToResponseEvents(chunks([chunk({ content: "Hel" }, "length")]), { id: "resp_x", createdAt: 1 }),
  );
  const last = events.at(-1)!;
  assert.is(last.type, "response.incomplete");
  assert.equal((last.response as JsonObject).incomplete_details, { reason: "max_output_tokens" });
  assert.is((last.response as JsonObject).id, "resp_x");
});

test.run();
