import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { readSse, type SseEvent } from "../../../wire/sse-reader.js";
import {
  providerErrorMessage,
  retryAfterSeconds,
  statusForErrorObject,
} from "../../../server/engine/providers/upstream-error-body.js";

const test = suite("providers: SSE and error body parsing");

async function events(parts: Array<string | Uint8Array>): Promise<SseEvent[]> {
  async function* body() {
    for (const part of parts) yield typeof part === "string" ? Buffer.from(part, "utf8") : part;
  }
  const out: SseEvent[] = [];
  for await (const event of readSse(body())) out.push(event);
  return out;
}

const STREAM =
  ': keep-alive\n\nevent: message_start\ndata: {"a":"é😀"}\n\ndata: line1\ndata:line2\r\n\r\ndata: [DONE]\n\n';
const EXPECTED: SseEvent[] = [
  { event: "message_start", data: '{"a":"é😀"}' },
  { event: undefined, data: "line1\nline2" },
  { event: undefined, data: "[DONE]" },
];

test("events are the same however the bytes are split, also inside UTF-8 sequences", async () => {
  assert.equal(await events([STREAM]), EXPECTED);
  const bytes = Buffer.from(STREAM, "utf8");
  assert.equal(await events([...bytes].map((b) => Uint8Array.of(b))), EXPECTED);
  for (const at of [5, 17, 30, 33, 60])
    assert.equal(await events([bytes.subarray(0, at), bytes.subarray(at)]), EXPECTED, `split at ${at}`);
});

test("an event the body ends in the middle of is dropped", async () => {
  assert.equal(await events(["data: one\n\ndata: two"]), [{ event: undefined, data: "one" }]);
  assert.equal(await events(["data: one\n\ndata: two\n"]), [{ event: undefined, data: "one" }]);
});

test("Retry-After: delta seconds, HTTP dates, retry-after-ms", () => {
  const now = Date.parse("2025-01-01T00:00:00Z");
  assert.is(retryAfterSeconds("30", undefined, now), 30);
  assert.is(retryAfterSeconds("1.5", undefined, now), 2);
  assert.is(retryAfterSeconds("Wed, 01 Jan 2025 00:01:00 GMT", undefined, now), 60);
  assert.is(retryAfterSeconds("Tue, 31 Dec 2024 23:00:00 GMT", undefined, now), 0);
  assert.is(retryAfterSeconds(undefined, "2500", now), 3);
  assert.is(retryAfterSeconds("soon", undefined, now), undefined);
  assert.is(retryAfterSeconds(undefined, undefined, now), undefined);
});

test("error messages: OpenAI and Anthropic shapes, scrubbed of keys", () => {
  assert.is(
    providerErrorMessage({ error: { message: "Rate limit reached", type: "requests" } }, "k"),
    "Rate limit reached",
  );
  assert.is(
    providerErrorMessage({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }, "k"),
    "Overloaded",
  );
  assert.is(providerErrorMessage({ error: "plain" }, "k"), "plain");
  assert.is(providerErrorMessage({ detail: "x" }, "k"), undefined);
  assert.is(
    providerErrorMessage(
      { error: { message: "key my-secret-key and sk-proj-abc123def456 and Bearer xyz" } },
      "my-secret-key",
    ),
    "key [redacted] and [redacted] and [redacted]",
  );
});

test("in-body error objects map to statuses by code or type", () => {
  assert.is(statusForErrorObject({ type: "overloaded_error" }), 529);
  assert.is(statusForErrorObject({ type: "rate_limit_error" }), 429);
  assert.is(statusForErrorObject({ type: "api_error" }), 502);
  assert.is(statusForErrorObject({ type: "invalid_request_error" }), 400);
  assert.is(statusForErrorObject({ type: "requests", code: "rate_limit_exceeded" }), 429);
  assert.is(statusForErrorObject({ code: 503 }), 503);
  assert.is(statusForErrorObject({ type: "something_new" }), 502);
});

test.run();
