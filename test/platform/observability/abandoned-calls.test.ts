import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { ChatCompletionRequestSchema, ChatRole, InferenceService } from "../../../gen/gateway/v1/inference_pb.js";
import { eventually } from "../../support/eventually.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";
import { accessLinesOf, captureLogs, type CapturedLogs, type LogLine } from "../../support/log-lines.js";
import { takeSseBlocks } from "../../support/sse.js";

/**
 * A call its client abandons is recorded as what it was, on every door: the access line, the
 * request metrics and the request log say 499 (never 200), with the time the provider ran and
 * `upstreamCancelled: true`, since the gateway cut the provider's call short. Streamed (the client
 * leaves after two chunks) and plain (the client leaves while the provider is still thinking).
 */
interface Env {
  env: InferenceGateway;
  logs: CapturedLogs;
}
const test = suite<Env>("observability: abandoned calls");

const CHAT = "/api/v1/chat/completions";
const HELLO = [{ role: "user", content: "Hi there" }];
const ONLY_MOCKAI = { only: ["mockai"] };
/** A long answer, chunk by chunk: the stream is far from its end when the client leaves after two chunks. */
const SLOW_STREAM = { model: "chat-a", reply: "word ".repeat(60).trim(), chunkDelayMs: 100, times: 1 };

test.before(async (ctx) => {
  ctx.logs = captureLogs("info");
  ctx.env = await startInferenceGateway({}, { log: ctx.logs.log });
});
test.after(async (ctx) => ctx.env.stop());
test.before.each(({ env }) => env.upstream.reset());

/** The one access line of a request, once written (an abandoned call's is written after the client left). */
async function accessLine(logs: CapturedLogs, requestId: string): Promise<LogLine> {
  const lines = await eventually(() => accessLinesOf(logs.lines, requestId), `the access line of ${requestId}`, {
    until: (now) => now.length > 0,
  });
  assert.is(lines.length, 1, JSON.stringify(lines));
  return lines[0]!;
}

/** Streams a chat completion over REST and leaves once `chunks` events have arrived. */
async function leaveRestStreamAfter(env: InferenceGateway, requestId: string, chunks: number): Promise<void> {
  const controller = new AbortController();
  const res = await fetch(env.gw.url + CHAT, {
    method: "POST",
    headers: { authorization: `Bearer ${env.gw.key}`, "content-type": "application/json", "x-request-id": requestId },
    body: JSON.stringify({ model: "mock/chat", messages: HELLO, stream: true, provider: ONLY_MOCKAI }),
    signal: controller.signal,
  });
  assert.is(res.status, 200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (takeSseBlocks(text).events.length < chunks) {
    const { value, done } = await reader.read();
    assert.not.ok(done, `the stream ended before ${chunks} chunks: ${text}`);
    text += decoder.decode(value, { stream: true });
  }
  controller.abort();
  await reader.cancel().catch(() => undefined);
}

/** A plain chat completion over REST whose client leaves once the provider has the request (it never answers). */
async function leaveRestWhileThinking(env: InferenceGateway, requestId: string): Promise<void> {
  env.upstream.rule({ model: "chat-a", hang: true, times: 1 });
  const seen = env.upstream.requests.length;
  const controller = new AbortController();
  const pending = fetch(env.gw.url + CHAT, {
    method: "POST",
    headers: { authorization: `Bearer ${env.gw.key}`, "content-type": "application/json", "x-request-id": requestId },
    body: JSON.stringify({ model: "mock/chat", messages: HELLO, provider: ONLY_MOCKAI }),
    signal: controller.signal,
  }).then(
    () => "answered",
    () => "aborted",
  );
  await eventually(() => env.upstream.requests.length, "the provider has the request", { until: (now) => now > seen });
  controller.abort();
  assert.is(await pending, "aborted");
}

function grpcChat(env: InferenceGateway, requestId: string, stream: boolean, signal: AbortSignal) {
  const request = create(ChatCompletionRequestSchema, {
    model: "mock/chat",
    stream,
    messages: [{ role: ChatRole.USER, content: { kind: { case: "stringValue", value: "Hi there" } } }],
    provider: { only: ["mockai"] },
  });
  const client = createClient(InferenceService, createGrpcTransport({ baseUrl: env.gw.grpcUrl }));
  return client.createChatCompletion(request, {
    headers: { authorization: `Bearer ${env.gw.key}`, "x-request-id": requestId },
    signal,
  });
}

/** What every abandoned call's access line says: 499, the provider's time so far, and that its call was cut short. */
function assertAbandoned(line: LogLine, protocol: string): void {
  assert.equal([line.protocol, line.status, line.upstreamCancelled], [protocol, 499, true], JSON.stringify(line));
  assert.type(line.upstreamMs, "number");
  assert.ok((line.upstreamMs as number) > 0, `the provider ran: ${JSON.stringify(line)}`);
  assert.ok((line.upstreamMs as number) <= (line.durationMs as number), `within the request: ${JSON.stringify(line)}`);
}

test("REST, streamed: the client leaves after two chunks", async ({ env, logs }) => {
  env.upstream.rule(SLOW_STREAM);
  await leaveRestStreamAfter(env, "abandon-rest-sse", 2);
  assertAbandoned(await accessLine(logs, "abandon-rest-sse"), "rest");
});

test("REST, plain: the client leaves while the provider is thinking", async ({ env, logs }) => {
  await leaveRestWhileThinking(env, "abandon-rest-plain");
  assertAbandoned(await accessLine(logs, "abandon-rest-plain"), "rest");
});

test("a call that ends normally: its status, and no cancelled flag", async ({ env, logs }) => {
  const res = await fetch(env.gw.url + CHAT, {
    method: "POST",
    headers: {
      authorization: `Bearer ${env.gw.key}`,
      "content-type": "application/json",
      "x-request-id": "complete-rest-sse",
    },
    body: JSON.stringify({ model: "mock/chat", messages: HELLO, stream: true, provider: ONLY_MOCKAI }),
  });
  await res.text();
  const line = await accessLine(logs, "complete-rest-sse");
  assert.equal([line.status, line.upstreamCancelled], [200, undefined], JSON.stringify(line));
  assert.ok((line.upstreamMs as number) > 0, JSON.stringify(line));
});

test("gRPC, streamed: the client cancels after two chunks", async ({ env, logs }) => {
  env.upstream.rule(SLOW_STREAM);
  const controller = new AbortController();
  let received = 0;
  const ended = await (async () => {
    for await (const _event of grpcChat(env, "abandon-grpc-sse", true, controller.signal)) {
      received += 1;
      if (received === 2) controller.abort();
    }
  })().then(
    () => "ended",
    () => "aborted",
  );
  assert.equal([ended, received], ["aborted", 2]);
  assertAbandoned(await accessLine(logs, "abandon-grpc-sse"), "grpc");
});

test("gRPC, plain: the client cancels while the provider is thinking", async ({ env, logs }) => {
  env.upstream.rule({ model: "chat-a", hang: true, times: 1 });
  const seen = env.upstream.requests.length;
  const controller = new AbortController();
  const pending = (async () => {
    for await (const _event of grpcChat(env, "abandon-grpc-plain", false, controller.signal));
  })().then(
    () => "answered",
    () => "aborted",
  );
  await eventually(() => env.upstream.requests.length, "the provider has the request", { until: (now) => now > seen });
  controller.abort();
  assert.is(await pending, "aborted");
  assertAbandoned(await accessLine(logs, "abandon-grpc-plain"), "grpc");
});

test("metrics: abandoned calls count as 499, never as successes", async ({ env, logs }) => {
  const before = await requestCounts(env);
  env.upstream.rule(SLOW_STREAM);
  await leaveRestStreamAfter(env, "abandon-metrics-sse", 2);
  await leaveRestWhileThinking(env, "abandon-metrics-plain");
  // Counted when the access line is written: both are in once both lines are.
  await accessLine(logs, "abandon-metrics-sse");
  await accessLine(logs, "abandon-metrics-plain");
  const after = await requestCounts(env);
  assert.equal([after["499"] - before["499"], after["200"] - before["200"]], [2, 0]);
});

/** `gateway_requests_total` of REST chat completions by status 200 and 499. */
async function requestCounts(env: InferenceGateway): Promise<Record<"200" | "499", number>> {
  const text = await (await fetch(`${env.gw.url}/metrics`)).text();
  const count = (status: string): number => {
    const line = text
      .split("\n")
      .find(
        (l) =>
          l.startsWith("gateway_requests_total{") &&
          l.includes(`route="${CHAT}"`) &&
          l.includes('protocol="rest"') &&
          l.includes(`status="${status}"`),
      );
    return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1));
  };
  return { "200": count("200"), "499": count("499") };
}

test.run();
