import type { JsonObject } from "@bufbuild/protobuf";
import * as assert from "uvu/assert";
import { suite } from "../../support/suite.js";
import { writeCatalogFile } from "../../support/catalog-file.js";
import { loadCatalogFile } from "../../../server/engine/catalog/catalog-file.js";
import { anthropicRequest } from "../../../server/engine/providers/anthropic/chat-request.js";
import { chatCompletionFromMessage } from "../../../server/engine/providers/anthropic/chat-response.js";
import { converseRequest } from "../../../server/engine/providers/bedrock/converse-request.js";
import { geminiRequest } from "../../../server/engine/providers/google/chat-request.js";
import type { UpstreamTarget } from "../../../server/engine/providers/provider.js";
import { providerFor } from "../../../server/engine/providers/registry.js";
import { isUntranslatable } from "../../../server/engine/inference/formats/format-fields.js";
import { messagesToChat } from "../../../server/engine/inference/formats/messages-format.js";
import { MESSAGES_NATIVE } from "../../../server/engine/inference/formats/messages-native.js";
import { responsesToChat } from "../../../server/engine/inference/formats/responses-format.js";
import { RESPONSES_NATIVE } from "../../../server/engine/inference/formats/responses-native.js";

/**
 * The pieces behind native and translated calls, without a gateway: which hosts speak the
 * Responses API (and the setting that says so), the chat → Anthropic, Gemini and Bedrock codecs'
 * treatment of reasoning and of fields that are not chat's, what marks a request chat cannot
 * carry, and the replay and assembly of native answers for the response cache.
 */
const test = suite("providers: native APIs and field mapping");

const HELLO = [{ role: "user", content: "Hi" }];

function target(kind: UpstreamTarget["kind"], baseUrl: string, settings?: UpstreamTarget["settings"]): UpstreamTarget {
  return { kind, baseUrl, apiKey: "k", upstreamModelId: "m", timeoutMs: 1000, ...(settings ? { settings } : {}) };
}

test("which hosts are sent Responses calls natively: OpenAI's own, Azure's v1 surface, and any that says so", () => {
  const openai = providerFor("openai").native.responses!;
  assert.ok(openai.speaks(target("openai", "https://api.openai.com/v1")));
  assert.not.ok(
    openai.speaks(target("openai", "https://api.groq.com/openai/v1")),
    "an OpenAI-compatible host serves chat unless it says more",
  );
  assert.ok(openai.speaks(target("openai", "https://api.groq.com/openai/v1", { responsesApi: true })));
  assert.not.ok(
    openai.speaks(target("openai", "https://api.openai.com/v1", { responsesApi: false })),
    "the setting wins over the default",
  );
  const azure = providerFor("azure").native.responses!;
  assert.ok(azure.speaks(target("azure", "https://r.openai.azure.com")), "no settings (a private endpoint): v1");
  assert.ok(azure.speaks(target("azure", "https://r.openai.azure.com", { apiVersion: "v1" })));
  assert.not.ok(azure.speaks(target("azure", "https://r.openai.azure.com", { apiVersion: "2024-10-21" })));
  assert.not.ok(azure.speaks(target("azure", "https://r.openai.azure.com", { apiVersion: "v1", responsesApi: false })));
  assert.ok(providerFor("anthropic").native.messages!.speaks(target("anthropic", "https://api.anthropic.com/v1")));
  for (const kind of ["google", "bedrock"] as const) assert.equal(providerFor(kind).native, {});
});

test(
  "responses_api in GATEWAY_CONFIG: " + "a boolean, for kinds openai and azure, and on Azure only with api_version v1",
  async () => {
    const provider = (fields: JsonObject) => ({
      slug: "p",
      kind: "openai",
      base_url: "https://host.example/v1",
      api_key: "k",
      ...fields,
    });
    const load = async (fields: JsonObject) =>
      loadCatalogFile(await writeCatalogFile({ providers: [provider(fields)] }), {});
    assert.is((await load({ responses_api: true })).providers.get("p")?.settings?.responsesApi, true);
    assert.is(
      (await load({ kind: "azure", api_version: "v1", responses_api: false })).providers.get("p")?.settings
        ?.responsesApi,
      false,
    );
    assert.is((await load({})).providers.get("p")?.settings?.responsesApi, undefined, "unset: the kind's default");
    for (const [fields, rule] of [
      [
        { kind: "anthropic", responses_api: true },
        /providers\[0\]\.responses_api applies only to providers of kind openai or azure/,
      ],
      [
        { kind: "azure", api_version: "2024-10-21", responses_api: true },
        /providers\[0\]\.responses_api needs api_version "v1"/,
      ],
      [{ responses_api: "yes" }, /providers\[0\]\.responses_api must be true or false/],
    ] as const) {
      try {
        await load(fields);
        assert.unreachable(`${JSON.stringify(fields)} was accepted`);
      } catch (err) {
        assert.match((err as Error).message, rule);
      }
    }
  },
);

test("chat → Anthropic: reasoning becomes extended thinking, within max_tokens", () => {
  const thinking = (request: JsonObject) => anthropicRequest({ messages: HELLO, ...request }, "claude", false).thinking;
  assert.equal(thinking({ reasoning_effort: "high", max_tokens: 4000 }), { type: "enabled", budget_tokens: 3200 });
  assert.equal(thinking({ reasoning: { effort: "low" }, max_completion_tokens: 10_000 }), {
    type: "enabled",
    budget_tokens: 2000,
  });
  assert.equal(
    thinking({ reasoning: { enabled: true } }),
    { type: "enabled", budget_tokens: 2048 },
    "medium of the default 4096",
  );
  assert.equal(thinking({ reasoning: { max_tokens: 1500 }, max_tokens: 2000 }), {
    type: "enabled",
    budget_tokens: 1500,
  });
  assert.equal(thinking({ reasoning_effort: "minimal" }), { type: "disabled" });
  assert.equal(thinking({ reasoning: { enabled: false } }), { type: "disabled" });
  assert.is(thinking({ reasoning_effort: "high", max_tokens: 500 }), undefined, "no room to think within 500 tokens");
  assert.is(thinking({}), undefined);
});

test(
  "chat → Anthropic, Gemini, Bedrock: fields that are not chat's are sent as they came; " + "OpenAI-only ones are not",
  () => {
    const request = {
      messages: HELLO,
      thinking: { type: "enabled", budget_tokens: 1024 },
      mcp_servers: [{ type: "url", url: "https://mcp.example" }],
      safetySettings: [{ category: "HARM_CATEGORY_HATE_SPEECH", threshold: "BLOCK_NONE" }],
      additionalModelRequestFields: { reasoning_config: { type: "enabled" } },
      top_k: 7,
      seed: 3,
      logprobs: true,
      store: true,
      metadata: { a: "b" },
      reasoning_effort: "high",
    };
    const anthropic = anthropicRequest(request, "claude", false);
    assert.equal(anthropic.thinking, request.thinking, "the client's own thinking wins over the mapping");
    assert.equal([anthropic.mcp_servers, anthropic.top_k], [request.mcp_servers, 7]);
    const gemini = geminiRequest(request);
    assert.equal(gemini.safetySettings, request.safetySettings);
    const bedrock = converseRequest(request, "anthropic.claude-3-v1:0");
    assert.equal(
      bedrock.additionalModelRequestFields,
      { top_k: 7, reasoning_config: { type: "enabled" } },
      "the client's keys join the codec's object",
    );
    for (const body of [anthropic, gemini, bedrock]) {
      for (const name of ["seed", "logprobs", "store", "metadata", "reasoning_effort"])
        assert.is(body[name], undefined, name);
    }
  },
);

test("Anthropic → chat: the message's fields the codec does not read reach the chat answer", () => {
  const { body } = chatCompletionFromMessage({
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "claude",
    content: [{ type: "text", text: "Hi" }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
    container: { id: "container_1", expires_at: "2030-01-01T00:00:00Z" },
  });
  assert.equal(body.container, { id: "container_1", expires_at: "2030-01-01T00:00:00Z" });
  assert.is(body.type, undefined);
});

test(
  "what chat cannot carry is marked untranslatable (a 400 only where no endpoint speaks the format); " +
    "malformed input is not",
  () => {
    const reason = (run: () => unknown) => {
      try {
        run();
      } catch (err) {
        return isUntranslatable(err) ? "untranslatable" : "malformed";
      }
      return "translated";
    };
    assert.is(
      reason(() => responsesToChat({ input: "x", previous_response_id: "resp_1" })),
      "untranslatable",
    );
    assert.is(
      reason(() => responsesToChat({ input: "x", tools: [{ type: "web_search" }] })),
      "untranslatable",
    );
    assert.is(
      reason(() => responsesToChat({ input: [{ type: "item_reference", id: "msg_1" }] })),
      "untranslatable",
    );
    assert.is(
      reason(() => responsesToChat({ input: "x", background: true })),
      "untranslatable",
    );
    assert.is(
      reason(() => responsesToChat({ input: 5 })),
      "malformed",
    );
    assert.is(
      reason(() => responsesToChat({ input: "x", temperature: "hot" })),
      "malformed",
    );
    assert.is(
      reason(() =>
        messagesToChat({ max_tokens: 5, messages: HELLO, tools: [{ type: "bash_20250124", name: "bash" }] }),
      ),
      "untranslatable",
    );
    assert.is(
      reason(() =>
        messagesToChat({
          max_tokens: 5,
          messages: [{ role: "user", content: [{ type: "search_result", source: "s", title: "t", content: [] }] }],
        }),
      ),
      "untranslatable",
    );
    assert.is(
      reason(() => messagesToChat({ messages: HELLO })),
      "malformed",
    );
    assert.is(
      reason(() =>
        responsesToChat({
          input: "x",
          tool_choice: { type: "allowed_tools", mode: "auto", tools: [{ type: "function", name: "f" }] },
        }),
      ),
      "translated",
    );
  },
);

test("a native Messages answer replayed as events assembles back into itself (the cache's two forms)", () => {
  const message: JsonObject = {
    id: "gen-1",
    type: "message",
    role: "assistant",
    model: "k/anthropic",
    content: [
      { type: "thinking", thinking: "Hmm", signature: "sig" },
      { type: "text", text: "Hello there" },
      { type: "tool_use", id: "toolu_1", name: "lookup", input: { city: "Paris" } },
    ],
    stop_reason: "tool_use",
    stop_sequence: null,
    usage: { input_tokens: 3, output_tokens: 9, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
    container: null,
  };
  const events = MESSAGES_NATIVE.replay(message);
  const block = (deltas: number) => [
    "content_block_start",
    ...Array<string>(deltas).fill("content_block_delta"),
    "content_block_stop",
  ];
  assert.equal(
    events.map((e) => e.type),
    ["message_start", ...block(2), ...block(1), ...block(1), "message_delta", "message_stop"],
    "thinking and its signature, the text, the tool input",
  );
  const assembler = MESSAGES_NATIVE.assembler();
  for (const event of events) assembler.add(event);
  assert.equal(assembler.answer(), message);
  assert.is(events.map((e) => MESSAGES_NATIVE.eventText(e)).join(""), "Hello there");
});

test(
  "a native Responses answer replayed as events: " + "numbered, its text in one delta, the response whole at the end",
  () => {
    const response: JsonObject = {
      id: "resp_1",
      object: "response",
      status: "incomplete",
      model: "k/openai-native",
      output: [
        {
          id: "msg_1",
          type: "message",
          status: "incomplete",
          role: "assistant",
          content: [{ type: "output_text", text: "Hello", annotations: [] }],
        },
        {
          id: "fc_1",
          type: "function_call",
          status: "completed",
          call_id: "call_1",
          name: "lookup",
          arguments: '{"a":1}',
        },
      ],
      usage: { input_tokens: 1, output_tokens: 2 },
    };
    const events = RESPONSES_NATIVE.replay(response);
    assert.equal(
      events.map((e) => e.sequence_number),
      events.map((_, index) => index),
    );
    const last = events.at(-1)!;
    assert.is(last.type, "response.incomplete");
    assert.equal(last.response, response);
    assert.ok(RESPONSES_NATIVE.isTerminal(last) && !RESPONSES_NATIVE.isTerminal(events[0]!));
    assert.is(events.map((e) => RESPONSES_NATIVE.eventText(e)).join(""), "Hello");
    assert.equal(events.find((e) => e.type === "response.function_call_arguments.done")?.arguments, '{"a":1}');
    const assembler = RESPONSES_NATIVE.assembler();
    for (const event of events) assembler.add(event);
    assert.equal(assembler.answer(), response);
  },
);

test.run();
