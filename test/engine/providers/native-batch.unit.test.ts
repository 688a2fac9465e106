import type { JsonObject } from "@bufbuild/protobuf";
import * as assert from "uvu/assert";
import { anthropicChat } from "../../../server/engine/providers/anthropic/chat.js";
import { readLines } from "../../../server/engine/providers/line-reader.js";
import type {
  NativeBatchApi,
  NativeBatchRequest,
  NativeBatchResult,
  NativeBatchStatus,
} from "../../../server/engine/providers/native-batch-api.js";
import { requiredPart } from "../../../server/engine/providers/registry.js";
import { openAiChat } from "../../../server/engine/providers/openai/chat.js";
import type { ProviderKind, UpstreamTarget } from "../../../server/engine/providers/provider.js";
import { failure, mockSuite, signal, targetFor } from "./adapter-helpers.js";

const test = mockSuite("providers: native batch APIs");

/** The kinds with a native batch API. */
type BatchKind = Extract<ProviderKind, "openai" | "anthropic">;
const MODELS: Record<BatchKind, string> = { openai: "gpt-mock", anthropic: "claude-mock" };
const KINDS: BatchKind[] = ["anthropic", "openai"];

function items(count: number): NativeBatchRequest[] {
  return Array.from({ length: count }, (_, i) => ({
    customId: `item-${i + 1}`,
    body: {
      model: "gateway/alias",
      messages: [{ role: "user", content: `Question number ${i + 1}, please.` }],
      max_tokens: 50,
    },
  }));
}

function setup(
  mock: Parameters<typeof targetFor>[0],
  kind: BatchKind,
): { api: NativeBatchApi; target: UpstreamTarget } {
  return { api: requiredPart(kind, "nativeBatches"), target: targetFor(mock, kind, MODELS[kind]) };
}

/** Polls as the engine does, without any waiting: the mock moves a batch on per poll. */
async function pollUntilDone(
  api: NativeBatchApi,
  target: UpstreamTarget,
  id: string,
  maxPolls = 10,
): Promise<{ status: NativeBatchStatus; polls: number }> {
  for (let polls = 1; polls <= maxPolls; polls++) {
    const status = await api.status(target, id, signal());
    if (status.state !== "in_progress") return { status, polls };
  }
  throw new Error(`batch ${id} still in progress after ${maxPolls} polls`);
}

async function resultsOf(
  api: NativeBatchApi,
  target: UpstreamTarget,
  id: string,
): Promise<Map<string, NativeBatchResult>> {
  const out = new Map<string, NativeBatchResult>();
  for await (const result of api.results(target, id, signal())) out.set(result.customId, result);
  return out;
}

const messageOf = (body: JsonObject) => (body.choices as Array<Record<string, unknown>>)[0]?.message;

for (const kind of KINDS) {
  test(`${kind}: submit, poll until ended, results equal live answers with usage, errored items`, async ({ mock }) => {
    const { api, target } = setup(mock, kind);
    const requests = items(3);
    mock.batches.fault({ failItems: { customIds: ["item-2"], status: 400, message: "mock: bad item" } });
    const id = await api.submit(target, requests, signal());
    assert.is(mock.batches.created, 1);
    const { status } = await pollUntilDone(api, target, id);
    assert.equal(status, { state: "ended" });

    const results = await resultsOf(api, target, id);
    assert.equal([...results.keys()].sort(), ["item-1", "item-2", "item-3"]);
    const failed = results.get("item-2");
    assert.ok(failed && !failed.ok);
    if (failed && !failed.ok) {
      assert.is(failed.statusCode, 400);
      assert.is(failed.type, "invalid_request_error");
      assert.is(failed.message, "mock: bad item");
    }

    const adapter = kind === "openai" ? openAiChat : anthropicChat;
    for (const index of [0, 2]) {
      const request = requests[index]!;
      const result = results.get(request.customId);
      assert.ok(result?.ok, `${request.customId} succeeded`);
      if (!result?.ok) continue;
      const live = await adapter.chat(target, request.body, signal());
      assert.is(result.statusCode, 200);
      assert.equal(messageOf(result.body), messageOf(live.body));
      assert.equal(result.usage, live.usage);
      assert.equal(result.body.usage, live.body.usage);
      assert.is(result.usage.completionTokens, 3, "Hello from <model>: three words");
    }
  });

  test(`${kind}: a batch stays in progress for the configured polls`, async ({ mock }) => {
    const { api, target } = setup(mock, kind);
    mock.batches.fault({ inProgressPolls: 2 });
    const id = await api.submit(target, items(1), signal());
    const { status, polls } = await pollUntilDone(api, target, id);
    assert.is(status.state, "ended");
    assert.is(polls, 3);
  });

  test(`${kind}: cancel ends the batch cancelled, with no results for unrun items`, async ({ mock }) => {
    const { api, target } = setup(mock, kind);
    mock.batches.fault({ inProgressPolls: Infinity });
    const id = await api.submit(target, items(2), signal());
    assert.is((await api.status(target, id, signal())).state, "in_progress");
    await api.cancel(target, id, signal());
    assert.is((await pollUntilDone(api, target, id)).status.state, "cancelled");
    assert.is((await resultsOf(api, target, id)).size, 0);
  });

  test(`${kind}: an expired batch keeps the results of the items that finished`, async ({ mock }) => {
    const { api, target } = setup(mock, kind);
    mock.batches.fault({ outcome: "expired", finishedItems: 1 });
    const id = await api.submit(target, items(3), signal());
    assert.is((await pollUntilDone(api, target, id)).status.state, "expired");
    const results = await resultsOf(api, target, id);
    assert.equal([...results.keys()], ["item-1"]);
    assert.ok(results.get("item-1")?.ok);
  });

  test(`${kind}: remove deletes the provider-side batch, again without error, and a 5xx throws`, async ({ mock }) => {
    const { api, target } = setup(mock, kind);
    const first = await api.submit(target, items(2), signal());
    await pollUntilDone(api, target, first);
    assert.is(await api.remove(target, first, signal()), "deleted");
    assert.is(mock.batches.deleted, 1);
    assert.is(mock.batches.files(), 0, "no file is left behind");
    // A retried cleanup finds nothing left to delete.
    assert.is(await api.remove(target, first, signal()), "deleted");

    const second = await api.submit(target, items(1), signal());
    await pollUntilDone(api, target, second);
    mock.batches.fault({ deleteError: { status: 503, times: 1 } });
    const error = await failure(api.remove(target, second, signal()));
    assert.is(error.failure, "status");
    assert.is(error.options.status, 503);
    // The batch stays deletable once the provider recovers.
    assert.is(await api.remove(target, second, signal()), "deleted");
    assert.is(mock.batches.deleted, 2);
  });

  test(
    `${kind}: a provider error on submit is an UpstreamError with status and Retry-After, ` +
      "and leaves nothing behind",
    async ({ mock }) => {
      const { api, target } = setup(mock, kind);
      mock.batches.fault({ submitError: { status: 429, retryAfter: 7 } });
      const error = await failure(api.submit(target, items(2), signal()));
      assert.is(error.failure, "status");
      assert.is(error.options.status, 429);
      assert.is(error.options.retryAfterS, 7);
      assert.is(mock.batches.created, 0);
      assert.is(mock.batches.files(), 0, "the uploaded input file is deleted again");
    },
  );

  test(`${kind}: a wrong key is a 401 whose message carries no key`, async ({ mock }) => {
    const { api } = setup(mock, kind);
    const badKey = "sk-wrong-key-0123456789abcdef";
    const error = await failure(
      api.submit(targetFor(mock, kind, MODELS[kind], { apiKey: badKey }), items(1), signal()),
    );
    assert.is(error.options.status, 401);
    assert.not.ok(error.message.includes(badKey.slice(3, 12)), error.message);
  });

  test(`${kind}: an item error that echoes the key is redacted`, async ({ mock }) => {
    const { api, target } = setup(mock, kind);
    mock.batches.fault({
      failItems: { bodyContains: "number 1,", status: 401, message: `invalid key ${mock.apiKey}` },
    });
    const id = await api.submit(target, items(2), signal());
    await pollUntilDone(api, target, id);
    const result = (await resultsOf(api, target, id)).get("item-1");
    assert.ok(result && !result.ok);
    if (result && !result.ok) {
      assert.is(result.statusCode, 401);
      assert.not.ok(result.message.includes(mock.apiKey), result.message);
    }
  });
}

test(
  "anthropic: " + "the batch carries the live Messages requests with the target's model and the adapter's headers",
  async ({ mock }) => {
    const { api, target } = setup(mock, "anthropic");
    await api.submit(target, items(2), signal());
    const recorded = mock.requests[0];
    assert.is(recorded?.path, "/anthropic/v1/messages/batches");
    assert.is(recorded?.headers["x-api-key"], mock.apiKey);
    assert.is(recorded?.headers["anthropic-version"], "2023-06-01");
    assert.equal(recorded?.body, {
      requests: [
        {
          custom_id: "item-1",
          params: {
            model: "claude-mock",
            messages: [{ role: "user", content: [{ type: "text", text: "Question number 1, please." }] }],
            max_tokens: 50,
          },
        },
        {
          custom_id: "item-2",
          params: {
            model: "claude-mock",
            messages: [{ role: "user", content: [{ type: "text", text: "Question number 2, please." }] }],
            max_tokens: 50,
          },
        },
      ],
    });
  },
);

test("anthropic: an item the Messages API cannot carry fails the submission as unsupported, naming the item", async ({
  mock,
}) => {
  const { api, target } = setup(mock, "anthropic");
  const bad: NativeBatchRequest = { customId: "item-x", body: { messages: [{ role: "oracle", content: "?" }] } };
  const error = await failure(api.submit(target, [...items(1), bad], signal()));
  assert.is(error.failure, "unsupported");
  assert.match(error.message, "item-x");
  assert.is(mock.requests.length, 0, "nothing was sent");
});

test("anthropic: a failed batch (which Anthropic expresses per item) errors every item", async ({ mock }) => {
  const { api, target } = setup(mock, "anthropic");
  mock.batches.fault({ outcome: "failed" });
  const id = await api.submit(target, items(2), signal());
  assert.is((await pollUntilDone(api, target, id)).status.state, "ended");
  const results = [...(await resultsOf(api, target, id)).values()];
  assert.is(results.length, 2);
  assert.ok(results.every((result) => !result.ok && result.statusCode === 502 && result.type === "api_error"));
});

test("openai: the input file holds chat requests with the target's model, never streamed", async ({ mock }) => {
  const { api, target } = setup(mock, "openai");
  const requests = items(2);
  requests[0]!.body = { ...requests[0]!.body, stream: true, stream_options: { include_usage: true } };
  await api.submit(target, requests, signal());
  assert.equal(
    mock.requests.map((r) => r.path),
    ["/openai/v1/files", "/openai/v1/batches"],
  );
  assert.is(mock.requests[0]?.headers.authorization, `Bearer ${mock.apiKey}`);
  const create = mock.requests[1]?.body as Record<string, unknown>;
  assert.is(create.endpoint, "/v1/chat/completions");
  assert.is(create.completion_window, "24h");
  const file = await fetch(`${mock.openaiBaseUrl}/files/${String(create.input_file_id)}/content`, {
    headers: { authorization: `Bearer ${mock.apiKey}` },
  });
  const lines = (await file.text()).split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
  assert.equal(lines[0], {
    custom_id: "item-1",
    method: "POST",
    url: "/v1/chat/completions",
    body: { model: "gpt-mock", messages: [{ role: "user", content: "Question number 1, please." }], max_tokens: 50 },
  });
  assert.is(lines.length, 2);
});

test("openai: a failed batch reports the provider's reason", async ({ mock }) => {
  const { api, target } = setup(mock, "openai");
  mock.batches.fault({ outcome: "failed" });
  const id = await api.submit(target, items(1), signal());
  assert.equal((await pollUntilDone(api, target, id)).status, {
    state: "failed",
    message: "mock upstream: the batch failed",
  });
  assert.is((await resultsOf(api, target, id)).size, 0);
});

test("result files are read line by line however the bytes are split", async () => {
  const text = '{"a":"é😀"}\r\n\n{"b":2}\n{"c":3}';
  const bytes = Buffer.from(text, "utf8");
  async function* one(): AsyncGenerator<Uint8Array> {
    for (const byte of bytes) yield Uint8Array.of(byte);
  }
  const lines: string[] = [];
  for await (const line of readLines(one())) lines.push(line);
  assert.equal(lines, ['{"a":"é😀"}', '{"b":2}', '{"c":3}']);
});

test.run();
