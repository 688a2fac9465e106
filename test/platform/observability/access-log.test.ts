import http from "node:http";
import type { AddressInfo } from "node:net";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { KeysService } from "../../../gen/gateway/v1/keys_pb.js";
import { hashKey, maskKey } from "../../../server/platform/secrets/key-secret.js";
import { writeCatalogFile } from "../../support/catalog-file.js";
import { eventually } from "../../support/eventually.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { call } from "../../support/http.js";
import { accessLinesOf, captureLogs, type CapturedLogs, type LogLine } from "../../support/log-lines.js";
import { startMockUpstream, type MockUpstream } from "../../upstream/mock-upstream.js";

/**
 * Logs: one info access line per request on every protocol, named by route template or
 * RPC path, with status, duration, request id and the key's label, never the key; REST requests,
 * which pass the core's interceptors in-process, are not logged twice. Upstream failures are
 * logged with provider, endpoint, model and status, and the fallback taken.
 */
interface Env {
  gw: TestGateway;
  upstream: MockUpstream;
  logs: CapturedLogs;
}
const test = suite<Env>("observability: access log and upstream failures");

/** The key the `refused` provider is configured with (the mock refuses it): no log line may hold it. */
const PROVIDER_KEY_OF_REFUSED = "sk-provider-key-the-mock-refuses";

test.before(async (ctx) => {
  ctx.upstream = await startMockUpstream();
  const closed = await closedPort();
  const file = await writeCatalogFile({
    providers: [
      {
        slug: "down",
        name: "Down",
        kind: "openai",
        base_url: `http://127.0.0.1:${closed}/v1`,
        api_key: "",
        timeout_ms: 2000,
      },
      {
        slug: "mockai",
        name: "MockAI",
        kind: "openai",
        base_url: ctx.upstream.openaiBaseUrl,
        api_key: ctx.upstream.apiKey,
        timeout_ms: 500,
      },
      {
        slug: "backup",
        name: "Backup",
        kind: "openai",
        base_url: ctx.upstream.openaiBaseUrl,
        api_key: ctx.upstream.apiKey,
        timeout_ms: 2000,
      },
      {
        slug: "refused",
        name: "Refused",
        kind: "openai",
        base_url: ctx.upstream.openaiBaseUrl,
        api_key: PROVIDER_KEY_OF_REFUSED,
        timeout_ms: 2000,
      },
    ],
    models: [
      {
        id: "mock/chat",
        name: "Mock: Chat",
        created: 1_700_000_000,
        context_length: 8_000,
        endpoints: [
          {
            provider: "down",
            upstream_model_id: "chat-down",
            pricing: { prompt: "0.0000001", completion: "0.0000001" },
          },
          { provider: "mockai", upstream_model_id: "chat-a", pricing: { prompt: "0.000001", completion: "0.000002" } },
          { provider: "backup", upstream_model_id: "chat-b", pricing: { prompt: "0.000003", completion: "0.000004" } },
        ],
      },
      {
        id: "mock/refused",
        name: "Mock: Refused",
        created: 1_700_000_000,
        context_length: 8_000,
        endpoints: [
          { provider: "refused", upstream_model_id: "chat-r", pricing: { prompt: "0.000001", completion: "0.000002" } },
        ],
      },
    ],
  });
  ctx.logs = captureLogs("debug");
  ctx.gw = await startTestGateway({ GATEWAY_CONFIG: file }, {}, ctx.logs.log);
});
test.after(async (ctx) => {
  await ctx.gw.stop();
  await ctx.upstream.close();
});
test.before.each(({ upstream }) => upstream.reset());

async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The one access line of a request, once written. */
async function accessLine(logs: CapturedLogs, requestId: string): Promise<LogLine> {
  // Lines of a streamed or abandoned call are written after the client has its answer.
  const lines = await eventually(
    () => accessLinesOf(logs.lines, requestId),
    `the access line of ${requestId} is written`,
    { until: (now) => now.length > 0 },
  );
  assert.is(lines.length, 1, JSON.stringify(lines));
  return lines[0]!;
}

function linesOf(logs: CapturedLogs, requestId: string, message: RegExp): LogLine[] {
  return logs.lines.filter((line) => line.requestId === requestId && message.test(line.msg));
}

const ONLY_MOCKAI = { only: ["mockai"] };

test("REST: one info line with the route template, status, duration, request id and key label, never the key", async ({
  gw,
  logs,
}) => {
  const hash = hashKey(gw.key);
  const res = await call(gw.url, "GET", `/api/v1/keys/${hash}`, { key: gw.key, headers: { "x-request-id": "rest-1" } });
  assert.is(res.status, 200, res.text);
  const line = await accessLine(logs, "rest-1");
  assert.is(line.level, 30);
  assert.is(line.protocol, "rest");
  assert.is(line.method, "GET");
  assert.is(line.route, "/api/v1/keys/{hash}");
  assert.is(line.status, 200);
  assert.type(line.durationMs, "number");
  assert.is(line.keyLabel, maskKey(gw.key));
  const text = JSON.stringify(line);
  assert.not.ok(text.includes(gw.key), "the key is not logged");
  assert.not.ok(text.includes(hash), "nor its hash, which the raw path held");
});

test("REST errors: the facade's own 401 (no key label), a 404 without a route (no route)", async ({ gw, logs }) => {
  await call(gw.url, "GET", "/api/v1/key", { headers: { "x-request-id": "rest-401" } });
  const refused = await accessLine(logs, "rest-401");
  assert.equal([refused.status, refused.route, refused.keyLabel], [401, "/api/v1/key", null]);
  await call(gw.url, "GET", "/api/v1/nothing/here/abc123", { key: gw.key, headers: { "x-request-id": "rest-404" } });
  const missing = await accessLine(logs, "rest-404");
  assert.equal([missing.status, missing.route], [404, null]);
});

test("an event stream is one line too, written when the stream ends", async ({ gw, logs }) => {
  const res = await call(gw.url, "POST", "/api/v1/chat/completions", {
    key: gw.key,
    body: { model: "mock/chat", messages: [{ role: "user", content: "Hi" }], stream: true, provider: ONLY_MOCKAI },
    headers: { "x-request-id": "rest-sse" },
  });
  assert.is(res.status, 200, res.text);
  const line = await accessLine(logs, "rest-sse");
  assert.equal([line.route, line.status, line.keyLabel], ["/api/v1/chat/completions", 200, maskKey(gw.key)]);
});

test("gRPC and Connect: one line per call with the RPC path, status and key label", async ({ gw, logs }) => {
  const grpc = createClient(KeysService, createGrpcTransport({ baseUrl: gw.grpcUrl }));
  await grpc.getCurrentKey({}, { headers: { authorization: `Bearer ${gw.key}`, "x-request-id": "grpc-1" } });
  const line = await accessLine(logs, "grpc-1");
  assert.equal(
    [line.level, line.protocol, line.method, line.route, line.status, line.keyLabel],
    [30, "grpc", "unary", "/gateway.v1.KeysService/GetCurrentKey", 200, maskKey(gw.key)],
  );
  await grpc.getCurrentKey({}, { headers: { "x-request-id": "grpc-401" } }).catch(() => undefined);
  const refused = await accessLine(logs, "grpc-401");
  assert.equal([refused.status, refused.keyLabel], [401, null]);

  const connect = createClient(KeysService, createConnectTransport({ baseUrl: gw.url, httpVersion: "1.1" }));
  await connect.getCurrentKey({}, { headers: { authorization: `Bearer ${gw.key}`, "x-request-id": "connect-1" } });
  const connectLine = await accessLine(logs, "connect-1");
  assert.equal(
    [connectLine.protocol, connectLine.route, connectLine.status],
    ["connect", "/gateway.v1.KeysService/GetCurrentKey", 200],
  );
});

test("a REST request is logged once, though it passes the core's interceptors", async ({ gw, logs }) => {
  for (let i = 0; i < 3; i++)
    await call(gw.url, "GET", "/api/v1/key", { key: gw.key, headers: { "x-request-id": `once-${i}` } });
  for (let i = 0; i < 3; i++) {
    const line = await accessLine(logs, `once-${i}`);
    assert.is(line.protocol, "rest");
    assert.is(line.upstreamMs, 0, "no provider answers GET /key: none of its time is the provider's");
  }
  assert.not.ok(
    logs.lines.some(
      (line) =>
        line.msg === "request" &&
        line.route === "/gateway.v1.KeysService/GetCurrentKey" &&
        String(line.requestId).startsWith("once-"),
    ),
  );
});

test("provider down: a warning names provider, endpoint, model and the fallback taken", async ({ gw, logs }) => {
  const res = await call(gw.url, "POST", "/api/v1/chat/completions", {
    key: gw.key,
    body: { model: "mock/chat", messages: [{ role: "user", content: "Hi" }] },
    headers: { "x-request-id": "down-1" },
  });
  assert.is(res.status, 200, res.text);
  const [line] = linesOf(logs, "down-1", /^upstream unreachable/);
  assert.ok(line, JSON.stringify(logs.lines.filter((l) => l.requestId === "down-1")));
  assert.is(line.level, 40);
  assert.is(line.provider, "down");
  assert.match(String(line.endpoint), /^127\.0\.0\.1:\d+\/v1$/);
  assert.equal(
    [line.model, line.upstreamModel, line.failure, line.fallbackProvider, line.fallbackModel],
    ["mock/chat", "chat-down", "connect", "mockai", "mock/chat"],
  );
  assert.match(line.msg, /falling back to mockai/);
});

test("provider key rejected: a warning with the provider's status, never the provider key", async ({ gw, logs }) => {
  const res = await call(gw.url, "POST", "/api/v1/chat/completions", {
    key: gw.key,
    body: { model: "mock/refused", messages: [{ role: "user", content: "Hi" }] },
    headers: { "x-request-id": "refused-1" },
  });
  assert.is(res.status, 502, res.text);
  const [line] = linesOf(logs, "refused-1", /refused the gateway's provider key/);
  assert.ok(line, JSON.stringify(logs.lines.filter((l) => l.requestId === "refused-1")));
  assert.equal(
    [line.level, line.provider, line.status, line.failure, line.fallbackProvider],
    [40, "refused", 401, "status", undefined],
  );
  assert.not.ok(logs.text().includes(PROVIDER_KEY_OF_REFUSED));
});

test("an upstream error status and a timeout, each with the fallback it led to", async ({ gw, upstream, logs }) => {
  upstream.rule({ model: "chat-a", status: 500, times: 1 });
  const failed = await call(gw.url, "POST", "/api/v1/chat/completions", {
    key: gw.key,
    body: {
      model: "mock/chat",
      messages: [{ role: "user", content: "Hi" }],
      provider: { order: ["mockai", "backup"], ignore: ["down"] },
    },
    headers: { "x-request-id": "status-1" },
  });
  assert.is(failed.status, 200, failed.text);
  const [statusLine] = linesOf(logs, "status-1", /^upstream answered with an error status/);
  assert.equal(
    [statusLine?.level, statusLine?.provider, statusLine?.status, statusLine?.fallbackProvider],
    [40, "mockai", 500, "backup"],
  );

  // mockai's provider allows 500 ms for the response headers.
  upstream.rule({ model: "chat-a", hang: true, times: 1 });
  const slow = await call(gw.url, "POST", "/api/v1/chat/completions", {
    key: gw.key,
    body: {
      model: "mock/chat",
      messages: [{ role: "user", content: "Hi" }],
      provider: { order: ["mockai", "backup"], ignore: ["down"] },
    },
    headers: { "x-request-id": "timeout-1" },
  });
  assert.is(slow.status, 200, slow.text);
  const [timeoutLine] = linesOf(logs, "timeout-1", /^upstream timed out/);
  assert.equal(
    [timeoutLine?.level, timeoutLine?.provider, timeoutLine?.failure, timeoutLine?.fallbackProvider],
    [40, "mockai", "timeout", "backup"],
  );
});

test("a call that fails nowhere logs no upstream line", async ({ gw, logs }) => {
  const res = await call(gw.url, "POST", "/api/v1/chat/completions", {
    key: gw.key,
    body: { model: "mock/chat", messages: [{ role: "user", content: "Hi" }], provider: ONLY_MOCKAI },
    headers: { "x-request-id": "clean-1" },
  });
  assert.is(res.status, 200, res.text);
  await accessLine(logs, "clean-1");
  assert.equal(
    logs.lines.filter((line) => line.requestId === "clean-1" && line.msg !== "request"),
    [],
  );
});

test.run();
