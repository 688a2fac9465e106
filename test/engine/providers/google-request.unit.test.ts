import type { JsonObject } from "@bufbuild/protobuf";
import * as assert from "uvu/assert";
import { geminiRequest, SKIP_THOUGHT_SIGNATURE } from "../../../server/engine/providers/google/chat-request.js";
import { finishReasonOf } from "../../../server/engine/providers/google/finish-reasons.js";
import { UpstreamError } from "../../../server/engine/providers/provider.js";
import { suite } from "../../support/suite.js";

/** The OpenAI chat → Gemini GenerateContentRequest codec, and the finish-reason table. */
const test = suite("providers: Google request translation");

const PNG = "iVBORw0KGgo=";

function refusal(request: JsonObject): UpstreamError {
  try {
    geminiRequest(request);
  } catch (err) {
    if (err instanceof UpstreamError) return err;
    throw err;
  }
  assert.unreachable("expected an UpstreamError");
  throw new Error("unreachable");
}

test("system and developer become systemInstruction; same-role turns merge; images go inline or by URL", () => {
  const out = geminiRequest({
    messages: [
      { role: "system", content: "You are terse." },
      { role: "developer", content: [{ type: "text", text: "Answer in English." }] },
      { role: "user", content: "First." },
      {
        role: "user",
        content: [
          { type: "text", text: "Both photos?" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
          { type: "image_url", image_url: { url: "https://example.com/b.JPG?size=large" } },
          { type: "image_url", image_url: { url: "https://example.com/photo" } },
          { type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } },
        ],
      },
      { role: "assistant", content: "" },
      { role: "assistant", content: "Yes." },
    ],
  });
  assert.equal(out, {
    contents: [
      {
        role: "user",
        parts: [
          { text: "First." },
          { text: "Both photos?" },
          { inlineData: { mimeType: "image/png", data: PNG } },
          { fileData: { fileUri: "https://example.com/b.JPG?size=large", mimeType: "image/jpeg" } },
          { fileData: { fileUri: "https://example.com/photo" } },
          { inlineData: { mimeType: "audio/wav", data: "UklGRg==" } },
        ],
      },
      { role: "model", parts: [{ text: "Yes." }] },
    ],
    systemInstruction: { parts: [{ text: "You are terse." }, { text: "Answer in English." }] },
  });
});

test(
  "tool round trip: assistant tool_calls become functionCall parts, " +
    "tool results functionResponse parts named by the call",
  () => {
    const weather = {
      type: "object",
      properties: { city: { type: "string" } },
      required: ["city"],
      additionalProperties: false,
    };
    const out = geminiRequest({
      messages: [
        { role: "user", content: "Weather in Paris and Rome?" },
        {
          role: "assistant",
          content: "Checking.",
          tool_calls: [
            {
              id: "call_a",
              type: "function",
              function: { name: "get_weather", arguments: '{"city":"Paris"}' },
              extra_content: { google: { thought_signature: "c2lnLWE=" } },
            },
            { id: "call_b", type: "function", function: { name: "get_time", arguments: '{"city":"Rome"}' } },
          ],
        },
        { role: "tool", tool_call_id: "call_b", content: "noon" },
        { role: "tool", tool_call_id: "call_a", content: '{"sky":"sunny"}' },
        { role: "user", content: "Thanks" },
        {
          role: "assistant",
          tool_calls: [{ id: "call_c", type: "function", function: { name: "get_weather", arguments: "" } }],
        },
        { role: "tool", tool_call_id: "call_c", content: [{ type: "text", text: "rain" }] },
      ],
      tools: [
        { type: "function", function: { name: "get_weather", description: "Current weather", parameters: weather } },
        { type: "function", function: { name: "get_time" } },
      ],
      tool_choice: "required",
      parallel_tool_calls: false,
    });
    assert.equal(out.contents, [
      { role: "user", parts: [{ text: "Weather in Paris and Rome?" }] },
      {
        role: "model",
        parts: [
          { text: "Checking." },
          { functionCall: { name: "get_weather", args: { city: "Paris" } }, thoughtSignature: "c2lnLWE=" },
          { functionCall: { name: "get_time", args: { city: "Rome" } } },
        ],
      },
      {
        role: "user",
        parts: [
          { functionResponse: { name: "get_time", response: { output: "noon" } } },
          { functionResponse: { name: "get_weather", response: { sky: "sunny" } } },
          { text: "Thanks" },
        ],
      },
      // A call whose signature did not come back gets the placeholder Gemini accepts.
      {
        role: "model",
        parts: [{ functionCall: { name: "get_weather", args: {} }, thoughtSignature: SKIP_THOUGHT_SIGNATURE }],
      },
      { role: "user", parts: [{ functionResponse: { name: "get_weather", response: { output: "rain" } } }] },
    ]);
    assert.equal(out.tools, [
      {
        functionDeclarations: [
          { name: "get_weather", description: "Current weather", parametersJsonSchema: weather },
          { name: "get_time" },
        ],
      },
    ]);
    assert.equal(out.toolConfig, { functionCallingConfig: { mode: "ANY" } });
  },
);

test("tool_choice forms; no toolConfig without tools", () => {
  const tools = [{ type: "function", function: { name: "f" } }];
  const messages = [{ role: "user", content: "hi" }];
  const configs = ["auto", "none", "required", { type: "function", function: { name: "f" } }].map(
    (choice) => geminiRequest({ messages, tools, tool_choice: choice }).toolConfig,
  );
  assert.equal(configs, [
    { functionCallingConfig: { mode: "AUTO" } },
    { functionCallingConfig: { mode: "NONE" } },
    { functionCallingConfig: { mode: "ANY" } },
    { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["f"] } },
  ]);
  assert.is(geminiRequest({ messages, tools }).toolConfig, undefined);
  assert.is(geminiRequest({ messages, tool_choice: "required" }).toolConfig, undefined);
  assert.is(refusal({ messages, tools, tool_choice: "sometimes" }).failure, "unsupported");
});

test("generation parameters go to generationConfig under Gemini's names; the rest is dropped", () => {
  const schema = { type: "object", properties: { answer: { type: "string" } } };
  const out = geminiRequest({
    messages: [{ role: "user", content: "hi" }],
    temperature: 1.5,
    top_p: 0.9,
    top_k: 40,
    max_tokens: 50,
    max_completion_tokens: 100,
    stop: ["END", "STOP"],
    seed: 7,
    presence_penalty: 0.5,
    frequency_penalty: -0.5,
    n: 2,
    response_format: { type: "json_schema", json_schema: { name: "a", schema } },
    reasoning: { effort: "high", max_tokens: 2048 },
    logprobs: true,
    top_logprobs: 3,
    logit_bias: { "1": 5 },
    user: "u",
  });
  assert.equal(Object.keys(out).sort(), ["contents", "generationConfig"]);
  assert.equal(out.generationConfig, {
    temperature: 1.5,
    topP: 0.9,
    topK: 40,
    seed: 7,
    presencePenalty: 0.5,
    frequencyPenalty: -0.5,
    candidateCount: 2,
    maxOutputTokens: 100,
    stopSequences: ["END", "STOP"],
    responseMimeType: "application/json",
    responseJsonSchema: schema,
    thinkingConfig: { includeThoughts: true, thinkingBudget: 2048 },
  });
  const plain = geminiRequest({
    messages: [{ role: "user", content: "hi" }],
    max_tokens: 5,
    stop: "END",
    response_format: { type: "json_object" },
    reasoning_effort: "low",
  });
  assert.equal(plain.generationConfig, {
    maxOutputTokens: 5,
    stopSequences: ["END"],
    responseMimeType: "application/json",
    thinkingConfig: { includeThoughts: true },
  });
  assert.is(
    geminiRequest({ messages: [{ role: "user", content: "hi" }], reasoning: { exclude: true } }).generationConfig,
    undefined,
  );
  assert.is(
    geminiRequest({ messages: [{ role: "user", content: "hi" }], response_format: { type: "text" } }).generationConfig,
    undefined,
  );
});

test("content Gemini cannot take is refused as unsupported", () => {
  const cases: JsonObject[] = [
    { messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "ftp://example.com/a.png" } }] }] },
    { messages: [{ role: "user", content: [{ type: "file", file: { file_id: "file-1" } }] }] },
    { messages: [{ role: "tool", tool_call_id: "nowhere", content: "x" }] },
    {
      messages: [
        { role: "assistant", tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "[1]" } }] },
      ],
    },
    { messages: [{ role: "user", content: "hi" }], tools: [{ type: "web_search" }] },
    { messages: [{ role: "function", content: "x" }] },
  ];
  for (const request of cases) assert.is(refusal(request).failure, "unsupported", JSON.stringify(request));
});

test("every documented finishReason has its chat finish_reason", () => {
  const reasons = [
    "STOP",
    "MAX_TOKENS",
    "SAFETY",
    "RECITATION",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "IMAGE_SAFETY",
    "MALFORMED_FUNCTION_CALL",
    "LANGUAGE",
    "OTHER",
    "A_LATER_ONE",
    "toString",
  ];
  assert.equal(
    reasons.map((r) => [r, finishReasonOf(r)]),
    [
      ["STOP", "stop"],
      ["MAX_TOKENS", "length"],
      ["SAFETY", "content_filter"],
      ["RECITATION", "content_filter"],
      ["BLOCKLIST", "content_filter"],
      ["PROHIBITED_CONTENT", "content_filter"],
      ["SPII", "content_filter"],
      ["IMAGE_SAFETY", "content_filter"],
      ["MALFORMED_FUNCTION_CALL", "error"],
      ["LANGUAGE", "stop"],
      ["OTHER", "stop"],
      ["A_LATER_ONE", "stop"],
      ["toString", "stop"],
    ],
  );
});

test.run();
