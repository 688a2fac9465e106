import { createClient, ConnectError, Code } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import OpenAI from "openai";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { KeysService } from "../../../gen/gateway/v1/keys_pb.js";
import { call } from "../../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";
import { ledgerRowsOf } from "../../support/ledger-rows.js";
import { sseData } from "../../support/sse.js";

/**
 * Request ids: every answer carries `x-request-id` on every protocol, the caller's own
 * when acceptable and a fresh one otherwise, and the usage ledger row of a call records it.
 */
const test = suite<{ env: InferenceGateway }>("observability: request ids");
test.before(async (ctx) => {
  ctx.env = await startInferenceGateway();
});
test.after(async (ctx) => ctx.env.stop());
test.before.each(({ env }) => env.upstream.reset());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const CHAT = { model: "mock/chat", messages: [{ role: "user", content: "Hi" }] };

test("a REST answer without a caller's id gets a fresh UUID, a different one per request", async ({ env }) => {
  const first = await call(env.gw.url, "GET", "/api/v1/key", { key: env.gw.key });
  const second = await call(env.gw.url, "GET", "/api/v1/key", { key: env.gw.key });
  assert.is(first.status, 200);
  assert.match(first.headers.get("x-request-id") ?? "", UUID);
  assert.match(second.headers.get("x-request-id") ?? "", UUID);
  assert.is.not(first.headers.get("x-request-id"), second.headers.get("x-request-id"));
});

test("a caller's valid id is kept; an invalid one is replaced, never refused", async ({ env }) => {
  const kept = await call(env.gw.url, "GET", "/api/v1/key", {
    key: env.gw.key,
    headers: { "x-request-id": "client-id_1.2:3" },
  });
  assert.is(kept.status, 200);
  assert.is(kept.headers.get("x-request-id"), "client-id_1.2:3");
  for (const invalid of ["has space", "x".repeat(129), "semi;colon", 'quo"te', "caf\u00e9"]) {
    const replaced = await call(env.gw.url, "GET", "/api/v1/key", {
      key: env.gw.key,
      headers: { "x-request-id": invalid },
    });
    assert.is(replaced.status, 200, invalid);
    assert.match(replaced.headers.get("x-request-id") ?? "", UUID, invalid);
  }
});

test("errors carry it: the facade's own 401, a 404 without a route, a core error", async ({ env }) => {
  const unauthenticated = await call(env.gw.url, "GET", "/api/v1/key", { headers: { "x-request-id": "no-key-1" } });
  assert.is(unauthenticated.status, 401);
  assert.is(unauthenticated.headers.get("x-request-id"), "no-key-1");
  const noRoute = await call(env.gw.url, "GET", "/api/v1/no/such/route", { key: env.gw.key });
  assert.is(noRoute.status, 404);
  assert.match(noRoute.headers.get("x-request-id") ?? "", UUID);
  const badModel = await call(env.gw.url, "POST", "/api/v1/chat/completions", {
    key: env.gw.key,
    body: { ...CHAT, model: "nobody/nothing" },
    headers: { "x-request-id": "bad-model-1" },
  });
  assert.is(badModel.status, 400);
  assert.is(badModel.headers.get("x-request-id"), "bad-model-1");
});

test("an event stream carries it in its head", async ({ env }) => {
  const res = await fetch(`${env.gw.url}/api/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${env.gw.key}`, "content-type": "application/json", "x-request-id": "sse-1" },
    body: JSON.stringify({ ...CHAT, stream: true }),
  });
  assert.is(res.status, 200);
  assert.ok(res.headers.get("content-type")?.startsWith("text/event-stream"));
  assert.is(res.headers.get("x-request-id"), "sse-1");
  assert.is(sseData(await res.text()).at(-1), "[DONE]");
});

test("the ledger row of a call records the id the client was told", async ({ env }) => {
  const res = await call(env.gw.url, "POST", "/api/v1/chat/completions", {
    key: env.gw.key,
    body: CHAT,
    headers: { "x-request-id": "ledger-1" },
  });
  assert.is(res.status, 200);
  const rows = await ledgerRowsOf(env.gw, (res.body as { id: string }).id);
  assert.is(rows.length, 1);
  assert.is(rows[0]!.request_id, "ledger-1");
  // Generated ids are recorded too.
  const fresh = await call(env.gw.url, "POST", "/api/v1/chat/completions", { key: env.gw.key, body: CHAT });
  const [row] = await ledgerRowsOf(env.gw, (fresh.body as { id: string }).id);
  assert.is(row!.request_id, fresh.headers.get("x-request-id"));
});

test("gRPC: the response metadata carries the caller's id, or a fresh one; an error's trailers too", async ({
  env,
}) => {
  const transport = createGrpcTransport({ baseUrl: env.gw.grpcUrl });
  const client = createClient(KeysService, transport);
  const authorization = `Bearer ${env.gw.key}`;
  let header: Headers | undefined;
  await client.getCurrentKey(
    {},
    { headers: { authorization, "x-request-id": "grpc-1" }, onHeader: (h) => (header = h) },
  );
  assert.is(header?.get("x-request-id"), "grpc-1");
  await client.getCurrentKey(
    {},
    { headers: { authorization, "x-request-id": "not valid!" }, onHeader: (h) => (header = h) },
  );
  assert.match(header?.get("x-request-id") ?? "", UUID);
  const refused = await client.getCurrentKey({}, { headers: { "x-request-id": "grpc-401" } }).then(
    () => undefined,
    (err: unknown) => ConnectError.from(err),
  );
  assert.is(refused?.code, Code.Unauthenticated);
  assert.is(refused?.metadata.get("x-request-id"), "grpc-401");
});

test("Connect over the HTTP port: the same", async ({ env }) => {
  const client = createClient(KeysService, createConnectTransport({ baseUrl: env.gw.url, httpVersion: "1.1" }));
  let header: Headers | undefined;
  await client.getCurrentKey(
    {},
    { headers: { authorization: `Bearer ${env.gw.key}`, "x-request-id": "connect-1" }, onHeader: (h) => (header = h) },
  );
  assert.is(header?.get("x-request-id"), "connect-1");
});

test("the openai SDK reads it: `_request_id` and the response headers", async ({ env }) => {
  const client = new OpenAI({ apiKey: env.gw.key, baseURL: `${env.gw.url}/api/v1`, maxRetries: 0 });
  const { response, request_id } = await client.chat.completions
    .create(
      { model: "mock/chat", messages: [{ role: "user", content: "Hi" }] },
      { headers: { "x-request-id": "sdk-1" } },
    )
    .withResponse();
  assert.is(response.headers.get("x-request-id"), "sdk-1");
  assert.is(request_id, "sdk-1");
  const generated = await client.chat.completions.create({
    model: "mock/chat",
    messages: [{ role: "user", content: "Hi" }],
  });
  assert.match(generated._request_id ?? "", UUID);
  // An error the SDK throws names it as well.
  const failed = await client.chat.completions
    .create(
      { model: "nobody/nothing", messages: [{ role: "user", content: "Hi" }] },
      { headers: { "x-request-id": "sdk-err-1" } },
    )
    .then(
      () => undefined,
      (err: unknown) => err,
    );
  assert.ok(failed instanceof OpenAI.APIError);
  assert.is(failed.requestID, "sdk-err-1");
});

test.run();
