import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { trace } from "@opentelemetry/api";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { ChatCompletionRequestSchema, ChatRole, InferenceService } from "../../../gen/gateway/v1/inference_pb.js";
import { KeysService } from "../../../gen/gateway/v1/keys_pb.js";
import { activeTracer } from "../../../server/platform/observability/tracing.js";
import { eventually } from "../../support/eventually.js";
import { call } from "../../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";
import { accessLinesOf, captureLogs, type CapturedLogs } from "../../support/log-lines.js";
import {
  SPAN_KIND_CLIENT,
  SPAN_KIND_SERVER,
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from "../../support/otlp-receiver.js";

/**
 * Traces, against an OTLP/HTTP receiver of our own: a SERVER span per request (REST
 * route template or RPC method) and under it a CLIENT span per upstream attempt with the GenAI
 * attributes, all of one trace; the trace id in the request's log lines. Every call is made in
 * `before`, then the gateway is stopped, which flushes the exporter: the tests read what arrived.
 */
interface Env {
  receiver: OtlpReceiver;
  env: InferenceGateway;
  logs: CapturedLogs;
}
const test = suite<Env>("observability: traces");

const CHAT = {
  model: "mock/chat",
  messages: [{ role: "user", content: "Hi there" }],
  provider: { order: ["mockai", "backup"] },
};
/** A caller's W3C trace context: the request's spans join its trace. */
const CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";

test.before(async (ctx) => {
  ctx.receiver = await startOtlpReceiver();
  ctx.logs = captureLogs("info");
  ctx.env = await startInferenceGateway(
    { OTEL_EXPORTER_OTLP_ENDPOINT: ctx.receiver.url, OTEL_SERVICE_NAME: "gateway-under-test" },
    { log: ctx.logs.log },
  );
  const { gw, upstream } = ctx.env;
  const rest = (requestId: string, body: object, headers: Record<string, string> = {}, signal?: AbortSignal) =>
    call(gw.url, "POST", "/api/v1/chat/completions", {
      key: gw.key,
      body,
      headers: { "x-request-id": requestId, ...headers },
      signal,
    });

  assert.is((await rest("trace-rest", CHAT)).status, 200);
  assert.is((await rest("trace-sse", { ...CHAT, stream: true })).status, 200);
  upstream.rule({ model: "chat-a", status: 500, times: 1 });
  assert.is((await rest("trace-fallback", CHAT)).status, 200);
  assert.is((await rest("trace-parent", CHAT, { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` })).status, 200);

  const transport = createGrpcTransport({ baseUrl: gw.grpcUrl });
  const headers = { authorization: `Bearer ${gw.key}` };
  await createClient(KeysService, transport).getCurrentKey(
    {},
    { headers: { ...headers, "x-request-id": "trace-grpc" } },
  );
  const request = create(ChatCompletionRequestSchema, {
    model: CHAT.model,
    stream: true,
    messages: [{ role: ChatRole.USER, content: { kind: { case: "stringValue", value: "Hi there" } } }],
  });
  const stream = createClient(InferenceService, transport).createChatCompletion(request, {
    headers: { ...headers, "x-request-id": "trace-grpc-chat" },
  });
  for await (const _event of stream);

  // A call its client leaves while the provider is thinking (the mock never answers); its span ends
  // with its access line.
  upstream.rule({ model: "chat-a", hang: true, times: 1 });
  const seen = upstream.requests.length;
  const leaving = new AbortController();
  const abandoned = rest("trace-abandoned", { ...CHAT, provider: { only: ["mockai"] } }, {}, leaving.signal).catch(
    () => "aborted",
  );
  await eventually(() => upstream.requests.length, "the provider has the request", { until: (now) => now > seen });
  leaving.abort();
  assert.is(await abandoned, "aborted");
  await eventually(() => accessLinesOf(ctx.logs.lines, "trace-abandoned"), "the abandoned call's access line", {
    until: (lines) => lines.length > 0,
  });

  // The exporter is flushed and shut down with the gateway.
  await ctx.env.stop();
});
test.after(async (ctx) => {
  await ctx.receiver.close();
});

function serverSpan(receiver: OtlpReceiver, requestId: string): ReceivedSpan {
  const spans = receiver.spans.filter(
    (span) => span.kind === SPAN_KIND_SERVER && span.attributes["gateway.request_id"] === requestId,
  );
  assert.is(
    spans.length,
    1,
    `server spans of ${requestId}: ` +
      `${JSON.stringify(receiver.spans.map((s) => [s.name, s.kind, s.attributes["gateway.request_id"]]))}`,
  );
  return spans[0]!;
}

function childrenOf(receiver: OtlpReceiver, parent: ReceivedSpan): ReceivedSpan[] {
  return receiver.spans.filter((span) => span.parentSpanId === parent.spanId);
}

test("a REST chat: a server span named by its route and a client span under it with the GenAI attributes", ({
  receiver,
}) => {
  const server = serverSpan(receiver, "trace-rest");
  assert.is(server.name, "POST /api/v1/chat/completions");
  assert.equal(
    [
      server.attributes["http.request.method"],
      server.attributes["http.route"],
      server.attributes["http.response.status_code"],
    ],
    ["POST", "/api/v1/chat/completions", 200],
  );
  assert.is(server.parentSpanId, "");
  assert.is(server.resource["service.name"], "gateway-under-test");

  const [attempt, ...others] = childrenOf(receiver, server);
  assert.equal(others, []);
  assert.ok(attempt);
  assert.is(attempt.kind, SPAN_KIND_CLIENT);
  assert.is(attempt.traceId, server.traceId);
  assert.is(attempt.name, "chat mock/chat");
  assert.equal(
    [
      attempt.attributes["gen_ai.operation.name"],
      attempt.attributes["gen_ai.provider.name"],
      attempt.attributes["gen_ai.system"],
      attempt.attributes["gen_ai.request.model"],
      attempt.attributes["gen_ai.response.model"],
      attempt.attributes["gateway.upstream_model"],
      attempt.attributes["server.address"],
    ],
    ["chat", "mockai", "mockai", "mock/chat", "chat-a", "chat-a", "127.0.0.1"],
  );
  assert.type(attempt.attributes["server.port"], "number");
  // The mock counts ceil(8 characters / 4) prompt tokens and answers "Hello from chat-a".
  assert.is(attempt.attributes["gen_ai.usage.input_tokens"], 2);
  assert.is(attempt.attributes["gen_ai.usage.output_tokens"], 3);
  assert.is(attempt.statusCode, 0);
});

test("a streamed REST chat: the same two spans", ({ receiver }) => {
  const server = serverSpan(receiver, "trace-sse");
  const [attempt] = childrenOf(receiver, server);
  assert.is(attempt?.kind, SPAN_KIND_CLIENT);
  assert.is(attempt?.attributes["gen_ai.usage.output_tokens"], 3);
});

test("a fallback: a failed client span with its status and error type, then the one that answered", ({ receiver }) => {
  const server = serverSpan(receiver, "trace-fallback");
  const attempts = childrenOf(receiver, server);
  assert.is(attempts.length, 2);
  const failed = attempts.find((span) => span.attributes["gen_ai.provider.name"] === "mockai");
  const served = attempts.find((span) => span.attributes["gen_ai.provider.name"] === "backup");
  assert.equal(
    [failed?.statusCode, failed?.attributes["error.type"], failed?.attributes["http.response.status_code"]],
    [2, "500", 500],
  );
  assert.equal([served?.statusCode, served?.attributes["error.type"]], [0, undefined]);
});

test("a caller's traceparent: the request joins the caller's trace", ({ receiver }) => {
  const server = serverSpan(receiver, "trace-parent");
  assert.is(server.traceId, CALLER_TRACE);
  assert.is(server.parentSpanId, CALLER_SPAN);
  assert.is(childrenOf(receiver, server)[0]?.traceId, CALLER_TRACE);
});

test("gRPC: a server span per call with the RPC attributes; a streamed chat's attempt under it", ({ receiver }) => {
  const unary = serverSpan(receiver, "trace-grpc");
  assert.is(unary.name, "gateway.v1.KeysService/GetCurrentKey");
  assert.equal(
    [
      unary.attributes["rpc.system"],
      unary.attributes["rpc.service"],
      unary.attributes["rpc.method"],
      unary.attributes["rpc.grpc.status_code"],
    ],
    ["grpc", "gateway.v1.KeysService", "GetCurrentKey", 0],
  );
  const chat = serverSpan(receiver, "trace-grpc-chat");
  assert.is(chat.name, "gateway.v1.InferenceService/CreateChatCompletion");
  const [attempt] = childrenOf(receiver, chat);
  assert.is(attempt?.kind, SPAN_KIND_CLIENT);
  assert.is(attempt?.traceId, chat.traceId);
});

test("a call its client abandoned: its server span says 499 and that the provider's call was cut short", ({
  receiver,
}) => {
  const server = serverSpan(receiver, "trace-abandoned");
  assert.equal(
    [server.attributes["http.response.status_code"], server.attributes["gateway.upstream_cancelled"]],
    [499, true],
  );
  // A 4xx is the client's doing: the span has not failed.
  assert.is(server.statusCode, 0);
});

test("the request's log lines carry its trace id", ({ receiver, logs }) => {
  for (const requestId of ["trace-rest", "trace-grpc", "trace-grpc-chat"]) {
    const [line] = accessLinesOf(logs.lines, requestId);
    assert.is(line?.trace_id, serverSpan(receiver, requestId).traceId, requestId);
  }
  const fallback = logs.lines.find((line) => line.requestId === "trace-fallback" && line.level === 40);
  assert.is(fallback?.trace_id, serverSpan(receiver, "trace-fallback").traceId);
});

test("stopped, the gateway leaves no tracer behind: later spans record nothing", ({ receiver }) => {
  assert.is(receiver.rejected, 0);
  assert.is(activeTracer(), undefined);
  assert.not.ok(trace.getTracer("after").startSpan("after").isRecording());
});

test.run();
