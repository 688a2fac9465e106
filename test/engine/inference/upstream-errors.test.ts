import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { abandonOnceUpstream } from "../../support/abandoned-call.js";
import { at, call, type Reply } from "../../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";
import { allLedgerRows, waitForLedgerRow } from "../../support/ledger-rows.js";
import { sseData } from "../../support/sse.js";
import type { MockRule } from "../../upstream/mock-upstream.js";

/**
 * Every row of the mapping table in server/engine/inference/upstream-errors.ts, one upstream failure at
 * a time. Each request is pinned to one provider (`only`) so that no fallback hides the mapping.
 * Then the streamed failures (a cut stream, an in-stream error event), which must end the stream
 * with an error event and never with `[DONE]`, and the client that goes away.
 */
const test = suite<{ env: InferenceGateway }>("upstream errors");
test.before(async (ctx) => {
  ctx.env = await startInferenceGateway();
});
test.after(async (ctx) => ctx.env.stop());
test.before.each(({ env }) => env.upstream.reset());

const HELLO = [{ role: "user", content: "Hi there" }];
const MOCKAI = { only: ["mockai"] };

function chat(env: InferenceGateway, body: Record<string, unknown> = {}): Promise<Reply> {
  return call(env.gw.url, "POST", "/api/v1/chat/completions", {
    key: env.gw.key,
    body: { model: "mock/chat", messages: HELLO, provider: MOCKAI, ...body },
  });
}

/**
 * The API's error envelope, exactly: {error: {code, message, metadata?: {reason, retryable}}} plus
 * OpenAI's `type`, without our provider key.
 */
function assertErrorBody(env: InferenceGateway, res: Reply, status: number): Record<string, unknown> {
  assert.is(res.status, status, res.text);
  assert.match(res.headers.get("content-type") ?? "", /application\/json/);
  const body = res.body as Record<string, unknown>;
  assert.equal(Object.keys(body), ["error"], res.text);
  const error = body.error as Record<string, unknown>;
  for (const key of Object.keys(error))
    assert.ok(["code", "message", "metadata", "type"].includes(key), `unexpected error field ${key}`);
  assert.is(
    error.type,
    status < 500
      ? status === 429
        ? "rate_limit_error"
        : "invalid_request_error"
      : status === 503 || status === 529
        ? "service_unavailable_error"
        : "server_error",
    res.text,
  );
  assert.is(error.code, status);
  assert.type(error.message, "string");
  assert.ok((error.message as string).length > 0);
  if (error.metadata !== undefined) {
    assert.equal(Object.keys(error.metadata as object).sort(), ["reason", "retryable"]);
  }
  assertNoSecret(env, res.text);
  return error;
}

function assertNoSecret(env: InferenceGateway, text: string): void {
  assert.ok(!text.includes(env.upstream.apiKey), "the provider's API key leaked");
  assert.ok(!text.includes(env.gw.key), "the caller's API key leaked");
}

interface Row {
  upstream: MockRule;
  status: number;
}

const MAPPING: Record<string, Row> = {
  "400 (bad request)": { upstream: { status: 400 }, status: 400 },
  "404": { upstream: { status: 404 }, status: 400 },
  "422": { upstream: { status: 422 }, status: 400 },
  "413 (too large)": { upstream: { status: 413 }, status: 413 },
  "401 (our credentials)": { upstream: { status: 401 }, status: 502 },
  "402": { upstream: { status: 402 }, status: 502 },
  "403": { upstream: { status: 403 }, status: 502 },
  "408": { upstream: { status: 408 }, status: 429 },
  "429": { upstream: { status: 429 }, status: 429 },
  "503": { upstream: { status: 503 }, status: 503 },
  "529 (overloaded)": { upstream: { status: 529 }, status: 529 },
  "500 (other 5xx)": { upstream: { status: 500 }, status: 502 },
  "502": { upstream: { status: 502 }, status: 502 },
  "504": { upstream: { status: 504 }, status: 502 },
  "200 with malformed JSON": { upstream: { rawBody: '{"id": "chatcmpl-1", "choices": [' }, status: 502 },
  "200 with JSON that is not a completion": { upstream: { rawBody: '{"choices": "none"}' }, status: 502 },
};

for (const [name, row] of Object.entries(MAPPING)) {
  test(`upstream ${name} → ${row.status}`, async ({ env }) => {
    env.upstream.rule({ model: "chat-a", times: 1, ...row.upstream });
    const res = await chat(env);
    const error = assertErrorBody(env, res, row.status);
    assert.match(String(error.message), /MockAI/, "the message names the provider");
    assert.is(env.upstream.requests.length, 1, "no retry, no fallback");
  });
}

test("upstream 429 with Retry-After: 7 → 429 with retry-after: 7", async ({ env }) => {
  env.upstream.rule({ model: "chat-a", status: 429, retryAfter: 7, times: 1 });
  const res = await chat(env);
  assertErrorBody(env, res, 429);
  assert.is(res.headers.get("retry-after"), "7");
});

test("upstream hang → 524 once the provider's timeout has passed", async ({ env }) => {
  env.upstream.rule({ model: "chat-a", hang: true, times: 1 });
  const error = assertErrorBody(env, await chat(env), 524);
  assert.match(String(error.message), /MockAI/);
});

test("a provider error message reaches the caller, scrubbed of keys", async ({ env }) => {
  const key = env.upstream.apiKey;
  const message = `model says no; you sent key ${key} as Bearer ${key} and sk-abcdefghijkl`;
  env.upstream.rule({
    model: "chat-a",
    status: 400,
    rawBody: JSON.stringify({ error: { message, type: "invalid_request_error" } }),
    times: 1,
  });
  const error = assertErrorBody(env, await chat(env), 400);
  assert.match(String(error.message), /model says no/);
  assert.not.match(String(error.message), /sk-abcdefghijkl/);

  env.upstream.rule({
    model: "chat-a",
    status: 401,
    rawBody: JSON.stringify({ error: { message: `Incorrect API key provided: ${key}` } }),
    times: 1,
  });
  assertErrorBody(env, await chat(env), 502);
});

test("the same mapping for the Anthropic wire format", async ({ env }) => {
  const only = { only: ["mockanthropic"] };
  for (const [upstream, status] of [
    [400, 400],
    [401, 502],
    [429, 429],
    [529, 529],
    [500, 502],
  ] as const) {
    env.upstream.rule({ model: "claude-x", status: upstream, times: 1 });
    const error = assertErrorBody(env, await chat(env, { provider: only }), status);
    assert.match(String(error.message), /MockAnthropic/);
  }
});

test("the same mapping for embeddings", async ({ env }) => {
  for (const [upstream, status] of [
    [400, 400],
    [403, 502],
    [503, 503],
    [529, 529],
  ] as const) {
    env.upstream.rule({ model: "embed-a", status: upstream, times: 1 });
    const res = await call(env.gw.url, "POST", "/api/v1/embeddings", {
      key: env.gw.key,
      body: { model: "mock/embed", input: "x" },
    });
    assertErrorBody(env, res, status);
  }
});

test("a streamed call that fails before its first chunk answers with the HTTP error, not a stream", async ({ env }) => {
  env.upstream.rule({ model: "chat-a", status: 429, retryAfter: 7, times: 1 });
  const limited = await chat(env, { stream: true });
  assertErrorBody(env, limited, 429);
  assert.is(limited.headers.get("retry-after"), "7");
  env.upstream.rule({ model: "chat-a", status: 529, times: 1 });
  assertErrorBody(env, await chat(env, { stream: true }), 529);
});

/** The stream's last event is the given error, after at least one chunk, and `[DONE]` never comes. */
function assertStreamEndsWithError(
  env: InferenceGateway,
  res: Reply,
  status: number,
  reason?: string,
): Record<string, unknown> {
  assert.is(res.status, 200, res.text);
  assert.match(res.headers.get("content-type") ?? "", /text\/event-stream/);
  assertNoSecret(env, res.text);
  assert.not.match(res.text, /\[DONE\]/, "a broken stream must not end with [DONE]");
  const events = sseData(res.text);
  assert.ok(events.length >= 2, res.text);
  assert.ok(at(events[0], "choices") !== undefined, "chunks came before the error");
  const last = events[events.length - 1] as Record<string, unknown>;
  assert.equal(Object.keys(last), ["error"], res.text);
  assert.is(at(last, "error", "code"), status, res.text);
  assert.type(at(last, "error", "message"), "string");
  if (reason !== undefined) assert.is(at(last, "error", "metadata", "reason"), reason, res.text);
  return last;
}

test("a stream cut upstream ends with a 502 stream_severed error event and no [DONE]", async ({ env }) => {
  env.upstream.rule({ model: "chat-a", cutAfterChunks: 2, times: 1 });
  const res = await chat(env, { stream: true });
  const last = assertStreamEndsWithError(env, res, 502, "stream_severed");
  assert.is(at(last, "error", "metadata", "retryable"), true);
  assert.match(res.text, /"content":"Hello "/, "the chunks before the cut were delivered");
  const rows = await allLedgerRows(env.gw);
  const row = rows[rows.length - 1]!;
  assert.equal([row.status, row.http_status, row.streamed, row.endpoint_id], ["error", 502, true, "mock/chat@mockai"]);
});

test("a stream cut through the Anthropic adapter ends the same way", async ({ env }) => {
  env.upstream.rule({ model: "claude-x", cutAfterChunks: 4, times: 1 });
  assertStreamEndsWithError(
    env,
    await chat(env, { stream: true, provider: { only: ["mockanthropic"] } }),
    502,
    "stream_severed",
  );
});

test("an in-stream provider error event ends the stream with an error event and no [DONE]", async ({ env }) => {
  env.upstream.rule({ model: "chat-a", streamError: { afterChunks: 2, message: "upstream exploded" }, times: 1 });
  assertStreamEndsWithError(env, await chat(env, { stream: true }), 502);

  env.upstream.rule({ model: "chat-a", streamError: { afterChunks: 2, type: "overloaded_error" }, times: 1 });
  assertStreamEndsWithError(env, await chat(env, { stream: true }), 529);

  env.upstream.rule({ model: "claude-x", streamError: { afterChunks: 4 }, times: 1 });
  assertStreamEndsWithError(env, await chat(env, { stream: true, provider: { only: ["mockanthropic"] } }), 502);
});

test("a client that disconnects mid-stream aborts the upstream call and leaves a cancelled ledger row", async ({
  env,
}) => {
  env.upstream.rule({ model: "chat-a", chunkDelayMs: 200, times: 1 });
  const controller = new AbortController();
  const res = await fetch(`${env.gw.url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${env.gw.key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "mock/chat", messages: HELLO, provider: MOCKAI, stream: true }),
    signal: controller.signal,
  });
  assert.is(res.status, 200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let received = "";
  while (!received.includes("data: ")) {
    const { value, done } = await reader.read();
    if (done) break;
    received += decoder.decode(value, { stream: true });
  }
  assert.match(received, /chat\.completion\.chunk/);
  controller.abort();
  await reader.cancel().catch(() => undefined);

  await env.upstream.waitForAbort();
  const row = await waitForLedgerRow(env.gw, (r) => r.status === "cancelled" && r.streamed);
  assert.is(row.http_status, 499);
  assert.is(row.endpoint_id, "mock/chat@mockai");
});

test("a client that goes away before a non-streamed answer aborts the upstream call too", async ({ env }) => {
  env.upstream.rule({ model: "chat-a", delayMs: 1500, times: 1 });
  assert.is(
    await abandonOnceUpstream(env.upstream, env.gw.url, env.gw.key, {
      model: "mock/chat",
      messages: HELLO,
      provider: MOCKAI,
    }),
    "aborted",
  );

  await env.upstream.waitForAbort();
  const row = await waitForLedgerRow(env.gw, (r) => r.status === "cancelled" && !r.streamed);
  assert.is(row.http_status, 499);
  assert.is(row.endpoint_id, "mock/chat@mockai");
});

test.run();
