import http from "node:http";
import type { AddressInfo } from "node:net";
import * as assert from "uvu/assert";
import { pinnedLookup } from "../../../egress/pinned-lookup.js";
import { anthropicChat } from "../../../server/engine/providers/anthropic/chat.js";
import { openAiChat } from "../../../server/engine/providers/openai/chat.js";
import { openAiFiles } from "../../../server/engine/providers/openai/files.js";
import { openAiNativeBatch } from "../../../server/engine/providers/openai/native-batch.js";
import { openAiVideo } from "../../../server/engine/providers/openai/video.js";
import { UpstreamError } from "../../../server/engine/providers/provider.js";
import { providerFor, requiredPart } from "../../../server/engine/providers/registry.js";
import { eventually } from "../../support/eventually.js";
import { mockSuite, collect, collectUntilFailure, contentOf, failure, signal, targetFor } from "./adapter-helpers.js";

/** The failure kinds of the shared HTTP layer, seen through the adapters against the mock upstream. */
const test = mockSuite("providers: upstream failures");

const MODEL = "gpt-mock";
const chat = { messages: [{ role: "user", content: "hi" }] };

test("providerFor gives each kind's parts; a part a kind lacks is undefined, and requiredPart says unsupported", () => {
  const openai = providerFor("openai");
  assert.equal(
    [openai.chat, openai.files, openai.nativeBatches, openai.video],
    [openAiChat, openAiFiles, openAiNativeBatch, openAiVideo],
  );
  assert.is(providerFor("anthropic").chat, anthropicChat);
  assert.is(providerFor("anthropic").video, undefined);
  assert.is(requiredPart("openai", "video"), openAiVideo);
  try {
    requiredPart("anthropic", "video");
    assert.unreachable("anthropic has no video API");
  } catch (err) {
    assert.ok(err instanceof UpstreamError && err.failure === "unsupported");
  }
});

test("status: the provider's message, the status and Retry-After seconds", async ({ mock }) => {
  mock.rule({ status: 503, retryAfter: 7, times: 1 });
  const error = await failure(openAiChat.chat(targetFor(mock, "openai", MODEL), chat, signal()));
  assert.equal(
    [error.failure, error.options.status, error.options.retryAfterS, error.message],
    ["status", 503, 7, "mock upstream failure 503"],
  );

  mock.rule({ status: 500 });
  const plain = await failure(openAiChat.chatStream(targetFor(mock, "openai", MODEL), chat, signal()));
  assert.equal([plain.failure, plain.options.status, plain.options.retryAfterS], ["status", 500, undefined]);
});

test("status: rules apply per model and only as often as told", async ({ mock }) => {
  mock.rule({ model: "other-model", status: 500 });
  mock.rule({ model: MODEL, status: 429, times: 2 });
  for (let i = 0; i < 2; i++)
    assert.is((await failure(openAiChat.chat(targetFor(mock, "openai", MODEL), chat, signal()))).options.status, 429);
  const ok = await openAiChat.chat(targetFor(mock, "openai", MODEL), chat, signal());
  assert.ok(Array.isArray(ok.body.choices));
  assert.is(
    (await failure(openAiChat.chat(targetFor(mock, "openai", "other-model"), chat, signal()))).options.status,
    500,
  );
});

test("status: messages are cut to 300 characters and never carry the key", async ({ mock }) => {
  const target = { ...targetFor(mock, "openai", MODEL), apiKey: "sk-live-abcdefghijklmnop1234" };
  const wrongKey = await failure(openAiChat.chat(target, chat, signal()));
  assert.is(wrongKey.options.status, 401);
  assert.match(wrongKey.message, /^Incorrect API key provided/);
  assert.not.match(wrongKey.message, "abcdefgh");
  assert.not.match(wrongKey.message, "1234");

  mock.rule({
    status: 400,
    rawBody: JSON.stringify({ error: { message: `bad request ${mock.apiKey} ${"x".repeat(1000)}` } }),
  });
  const long = await failure(openAiChat.chat(targetFor(mock, "openai", MODEL), chat, signal()));
  assert.is(long.options.status, 400);
  assert.ok(long.message.length <= 300, `${long.message.length} characters`);
  assert.not.match(long.message, mock.apiKey);
  assert.match(long.message, /^bad request \[redacted\] x+/);
});

test("status: a non-JSON error body still gives the status", async ({ mock }) => {
  mock.rule({ status: 502, rawBody: "<html>Bad gateway</html>" });
  const error = await failure(openAiChat.chat(targetFor(mock, "openai", MODEL), chat, signal()));
  assert.equal([error.failure, error.options.status, error.message], ["status", 502, "the upstream answered HTTP 502"]);
});

test("status: an error object sent with 200 is a status failure", async ({ mock }) => {
  mock.rule({ rawBody: JSON.stringify({ error: { message: "upstream busy", code: 503 } }) });
  const error = await failure(openAiChat.chat(targetFor(mock, "openai", MODEL), chat, signal()));
  assert.equal([error.failure, error.options.status, error.message], ["status", 503, "upstream busy"]);
});

test("timeout: no headers within timeoutMs; the upstream connection is closed", async ({ mock }) => {
  mock.rule({ hang: true });
  const error = await failure(openAiChat.chat(targetFor(mock, "openai", MODEL, { timeoutMs: 200 }), chat, signal()));
  assert.is(error.failure, "timeout");
  await mock.waitForAbort();
  const streamed = await failure(
    anthropicChat.chatStream(targetFor(mock, "anthropic", "claude-mock", { timeoutMs: 200 }), chat, signal()),
  );
  assert.is(streamed.failure, "timeout");
  await mock.waitForAbort();
});

test("timeout: a slow but timely answer is not one", async ({ mock }) => {
  mock.rule({ delayMs: 50 });
  const result = await openAiChat.chat(targetFor(mock, "openai", MODEL, { timeoutMs: 5_000 }), chat, signal());
  assert.ok(Array.isArray(result.body.choices));
});

test("connect: a refused connection", async ({ mock }) => {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const error = await failure(
    openAiChat.chat({ ...targetFor(mock, "openai", MODEL), baseUrl: `http://127.0.0.1:${port}/v1` }, chat, signal()),
  );
  assert.is(error.failure, "connect");
  assert.match(error.message, "ECONNREFUSED");
});

test("cut: a broken stream throws from the iterator after the chunks before it", async ({ mock }) => {
  mock.rule({ cutAfterChunks: 2 });
  const { chunks, error } = await collectUntilFailure(
    await openAiChat.chatStream(targetFor(mock, "openai", MODEL), chat, signal()),
  );
  assert.is(error.failure, "cut");
  assert.is(chunks.length, 2);
  assert.is(mock.aborted, 0, "the mock cut it, the client did not go away");
});

test("cut: a clean end before [DONE] and before any finish_reason", async ({ mock }) => {
  mock.rule({ endAfterChunks: 3, times: 1 });
  const { error } = await collectUntilFailure(
    await openAiChat.chatStream(targetFor(mock, "openai", MODEL), chat, signal()),
  );
  assert.is(error.failure, "cut");
  // role, three words, finish: providers that never send [DONE] still end complete.
  mock.rule({ endAfterChunks: 5, times: 1 });
  const stream = await openAiChat.chatStream(targetFor(mock, "openai", MODEL), chat, signal());
  assert.is(contentOf(await collect(stream)), `Hello from ${MODEL}`);
  assert.is(stream.usage(), undefined, "the usage chunk never came");
});

test("in-stream errors: OpenAI error data fails the iterator with the status of its type", async ({ mock }) => {
  mock.rule({ streamError: { afterChunks: 2, type: "server_error", message: "The server had an error" }, times: 1 });
  const server = await collectUntilFailure(
    await openAiChat.chatStream(targetFor(mock, "openai", MODEL), chat, signal()),
  );
  assert.equal(
    [server.error.failure, server.error.options.status, server.error.message],
    ["status", 502, "The server had an error"],
  );
  assert.is(server.chunks.length, 2);
  mock.rule({ streamError: { afterChunks: 1, type: "rate_limit_exceeded" }, times: 1 });
  const limited = await collectUntilFailure(
    await openAiChat.chatStream(targetFor(mock, "openai", MODEL), chat, signal()),
  );
  assert.is(limited.error.options.status, 429);
});

test("aborted: the caller's signal before the headers closes the upstream request", async ({ mock }) => {
  mock.rule({ hang: true });
  const controller = new AbortController();
  const pending = failure(openAiChat.chat(targetFor(mock, "openai", MODEL), chat, controller.signal));
  await eventually(() => mock.requests.length, "the request reached the upstream");
  controller.abort();
  assert.is((await pending).failure, "aborted");
  await mock.waitForAbort();
  assert.is(mock.aborted, 1);
});

test("aborted: the caller's signal mid-stream ends the iterator and the upstream answer", async ({ mock }) => {
  mock.rule({ chunkDelayMs: 30 });
  const controller = new AbortController();
  const stream = await anthropicChat.chatStream(targetFor(mock, "anthropic", "claude-mock"), chat, controller.signal);
  const iterator = stream.chunks[Symbol.asyncIterator]();
  const first = await iterator.next();
  assert.is(first.done, false);
  controller.abort();
  const error = await failure(iterator.next());
  assert.is(error.failure, "aborted");
  await mock.waitForAbort();
});

test("aborted: a signal aborted before the call sends nothing", async ({ mock }) => {
  const controller = new AbortController();
  controller.abort();
  const error = await failure(
    openAiChat.embeddings(targetFor(mock, "openai", MODEL), { input: "x" }, controller.signal),
  );
  assert.is(error.failure, "aborted");
  assert.is(mock.requests.length, 0);
});

test("a consumer that stops iterating early closes the upstream answer", async ({ mock }) => {
  mock.rule({ chunkDelayMs: 30 });
  const stream = await openAiChat.chatStream(targetFor(mock, "openai", MODEL), chat, signal());
  for await (const chunk of stream.chunks) {
    assert.ok(chunk);
    break;
  }
  await mock.waitForAbort();
});

test("protocol: a 2xx that is not JSON, or not the format", async ({ mock }) => {
  const target = targetFor(mock, "openai", MODEL);
  mock.rule({ rawBody: "not json", times: 1 });
  assert.is((await failure(openAiChat.chat(target, chat, signal()))).failure, "protocol");
  mock.rule({ rawBody: JSON.stringify({ object: "chat.completion" }), times: 1 });
  assert.is((await failure(openAiChat.chat(target, chat, signal()))).failure, "protocol");
  mock.rule({ rawBody: JSON.stringify({ object: "list", data: [{ index: 0, embedding: "AAAA" }] }), times: 1 });
  assert.is((await failure(openAiChat.embeddings(target, { input: "x" }, signal()))).failure, "protocol");
  mock.rule({ rawBody: JSON.stringify({ choices: [] }), times: 1 });
  assert.is((await failure(openAiChat.chatStream(target, chat, signal()))).failure, "protocol");
});

test("a pinned target connects only to its vetted addresses, whatever its host name resolves to", async ({ mock }) => {
  const { port } = new URL(mock.openaiBaseUrl);
  const path = new URL(mock.openaiBaseUrl).pathname;
  // `.invalid` never resolves (RFC 6761): the call can only succeed through the pinned lookup.
  const baseUrl = `http://upstream.invalid:${port}${path}`;
  const pinned = { lookup: pinnedLookup([{ address: "127.0.0.1", family: 4 }]), ca: [] };
  const answer = await openAiChat.chat(targetFor(mock, "openai", MODEL, { baseUrl, pinned }), chat, signal());
  assert.ok(Array.isArray(answer.body.choices));
  const unpinned = await failure(openAiChat.chat(targetFor(mock, "openai", MODEL, { baseUrl }), chat, signal()));
  assert.is(unpinned.failure, "connect");
});

test.run();
