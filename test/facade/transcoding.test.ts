import http from "node:http";
import { create } from "@bufbuild/protobuf";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { encodeResponse } from "../../facade/response-encoder.js";
import { InternChatChunkSchema, InternFinishReason } from "../../gen/gateway/v1/intern_chat_pb.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { at, call, rawRequest } from "../support/http.js";

/**
 * JSON on the wire (docs/api/conventions.md) and the error envelope, through the real gateway: how the
 * facade turns bodies, path segments and query strings into request messages, and messages back
 * into the API's JSON.
 */
const test = suite<{ gw: TestGateway }>("facade transcoding");
test.before(async (ctx) => {
  ctx.gw = await startTestGateway();
});
test.after(async (ctx) => {
  await ctx.gw.stop();
});

const MiB = 1024 * 1024;
let slugs = 0;
const slug = () => `t-${process.pid}-${++slugs}`;

const message = (body: unknown) => String(at(body, "error", "message"));

/** Every object key anywhere in a JSON value. */
function keysOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(keysOf);
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([key, inner]) => [key, ...keysOf(inner)]);
}

test("malformed JSON: 400 naming the problem", async ({ gw }) => {
  for (const raw of ['{"name": "a", ', "{name: 1}", "nope", '{"a":1}}']) {
    const res = await call(gw.url, "POST", "/api/v1/workspaces", { key: gw.key, raw });
    assert.is(res.status, 400, raw);
    assert.is(at(res.body, "error", "code"), 400);
    assert.match(message(res.body), /^Malformed JSON body: ./, raw);
  }
});

test("a body that is not a JSON object where one is expected: 400", async ({ gw }) => {
  for (const raw of ["[]", '[{"name":"a","slug":"a"}]', '"workspace"', "42", "true", "null"]) {
    const res = await call(gw.url, "POST", "/api/v1/workspaces", { key: gw.key, raw });
    assert.is(res.status, 400, raw);
    assert.match(message(res.body), /JSON object/, raw);
  }
});

test("wrong types: 400 naming the field", async ({ gw }) => {
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ name: 5, slug: "a" }, /\bname must be a string/],
    [{ name: "a", slug: ["a"] }, /\bslug must be a string/],
    [
      { name: "a", slug: "a", is_data_discount_logging_enabled: "yes" },
      /is_data_discount_logging_enabled must be a boolean/,
    ],
    [{ name: "a", slug: "a", io_logging_sampling_rate: "0.5" }, /io_logging_sampling_rate must be a number/],
    [{ name: "a", slug: "a", disabled_server_tools: "svc:bash" }, /disabled_server_tools must be an array/],
    [{ name: "a", slug: "a", disabled_server_tools: [7] }, /disabled_server_tools\[0\] must be one of: /],
    [
      { name: "a", slug: "a", default_provider_sort: "PROVIDER_SORT_PRICE" },
      /default_provider_sort must be one of: price, throughput, latency/,
    ],
    [{ name: "a", slug: "a", io_logging_api_key_ids: [null] }, /io_logging_api_key_ids\[0\] must not be null/],
  ];
  for (const [body, expected] of cases) {
    const res = await call(gw.url, "POST", "/api/v1/workspaces", { key: gw.key, body });
    assert.is(res.status, 400, JSON.stringify(body));
    assert.match(message(res.body), expected, JSON.stringify(body));
  }
  const limit = await call(gw.url, "POST", "/api/v1/keys", { key: gw.key, body: { name: "k", limit: { usd: 1 } } });
  assert.is(limit.status, 400);
  assert.match(message(limit.body), /\blimit must be a number/);
});

test("unknown JSON fields are ignored", async ({ gw }) => {
  const s = slug();
  const res = await call(gw.url, "POST", "/api/v1/workspaces", {
    key: gw.key,
    body: { name: "extra", slug: s, colour: "blue", nested: { deep: [1, 2] }, data: null },
  });
  assert.is(res.status, 201, res.text);
  assert.is(at(res.body, "data", "slug"), s);
  assert.not.ok(res.text.includes("colour"));
});

test("input accepts proto and lowerCamel names; output uses proto names only", async ({ gw }) => {
  const camel = await call(gw.url, "PATCH", "/api/v1/organization/settings", {
    key: gw.key,
    body: { isFilteredModelCatalogEnabled: true },
  });
  assert.is(camel.status, 200, camel.text);
  assert.is(at(camel.body, "data", "is_filtered_model_catalog_enabled"), true);
  assert.is(at(camel.body, "data", "isFilteredModelCatalogEnabled"), undefined);

  const snake = await call(gw.url, "PATCH", "/api/v1/organization/settings", {
    key: gw.key,
    body: { is_filtered_model_catalog_enabled: false },
  });
  assert.is(snake.status, 200, snake.text);
  assert.is(at(snake.body, "data", "is_filtered_model_catalog_enabled"), false);
  const read = await call(gw.url, "GET", "/api/v1/organization/settings", { key: gw.key });
  assert.is(at(read.body, "data", "is_filtered_model_catalog_enabled"), false);

  const created = await call(gw.url, "POST", "/api/v1/workspaces", {
    key: gw.key,
    body: {
      name: "camel",
      slug: slug(),
      isDataDiscountLoggingEnabled: true,
      ioLoggingSamplingRate: 0.5,
      defaultProviderSort: "latency",
    },
  });
  assert.is(created.status, 201, created.text);
  assert.is(at(created.body, "data", "is_data_discount_logging_enabled"), true);
  assert.is(at(created.body, "data", "io_logging_sampling_rate"), 0.5);
  assert.is(at(created.body, "data", "default_provider_sort"), "latency");
  for (const body of [
    camel.body,
    snake.body,
    created.body,
    (await call(gw.url, "GET", "/api/v1/key", { key: gw.key })).body,
  ]) {
    const camelKeys = keysOf(body).filter((key) => /[A-Z]/.test(key));
    assert.equal(camelKeys, [], "no lowerCamel names in output");
  }
});

test("query parameters are type-checked: 400 naming the parameter", async ({ gw }) => {
  for (const [query, name] of [
    ["limit=abc", "limit"],
    ["offset=1.5", "offset"],
    ["limit=", "limit"],
    ["include_disabled=maybe", "include_disabled"],
    ["limit=99999999999", "limit"],
  ] as const) {
    const res = await call(gw.url, "GET", `/api/v1/keys?${query}`, { key: gw.key });
    assert.is(res.status, 400, query);
    assert.is(at(res.body, "error", "code"), 400);
    assert.match(message(res.body), name, query);
  }
  for (const query of [
    "limit=5",
    "offset=0&include_disabled=true",
    "include_disabled=false",
    "includeDisabled=1",
    "unknown=1",
  ]) {
    const res = await call(gw.url, "GET", `/api/v1/keys?${query}`, { key: gw.key });
    assert.is(res.status, 200, `${query}: ${res.text}`);
  }
});

test("a declared Content-Length over the route's limit: 413 before the body is read", async ({ gw }) => {
  const res = await rawRequest(gw.url, "POST", "/api/v1/workspaces", {
    key: gw.key,
    headers: { "content-type": "application/json", "content-length": String(MiB + 1) },
    body: "{}",
  });
  assert.is(res.status, 413);
  assert.is(res.headers["content-type"], "application/json");
  assert.is(res.headers.connection, "close", "the unread body must not stay in the connection");
  assert.equal(at(res.body, "error", "metadata"), { reason: "payload_too_large", retryable: false });
  assert.is(at(res.body, "error", "code"), 413);
  assert.match(message(res.body), /1048576/);
});

/** Streams a chunked body (no Content-Length) until the server answers; resolves with the status. */
function sendGrowingBody(
  base: string,
  path: string,
  key: string,
  total: number,
): Promise<{ status: number; body: unknown }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: "POST",
        path,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      },
      (res) => {
        answered = true;
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        const done = () => {
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            body = text;
          }
          resolve({ status: res.statusCode ?? 0, body });
        };
        res.on("end", done);
        // The server may close the connection right after its answer; what arrived is the answer.
        res.on("error", done);
        res.on("aborted", done);
      },
    );
    // Writes fail once the server has closed the socket; only a missing response is a failure.
    req.on("error", (err) => {
      if (!answered) reject(err);
    });
    req.write('{"name":"big","slug":"big","description":"');
    const chunk = Buffer.alloc(64 * 1024, "a");
    let sent = 0;
    const pump = () => {
      while (sent < total && !answered && !req.destroyed) {
        sent += chunk.length;
        if (!req.write(chunk)) {
          req.once("drain", pump);
          return;
        }
      }
      if (sent >= total && !req.destroyed) req.end('"}');
    };
    pump();
  });
}

test("a chunked body that grows past the limit: 413", async ({ gw }) => {
  const res = await sendGrowingBody(gw.url, "/api/v1/workspaces", gw.key, 3 * MiB);
  assert.is(res.status, 413);
  assert.equal(at(res.body, "error", "metadata"), { reason: "payload_too_large", retryable: false });
});

test("after refusing large bodies the server still answers normally", async ({ gw }) => {
  const res = await call(gw.url, "GET", "/api/v1/key", { key: gw.key });
  assert.is(res.status, 200);
  assert.is(at(res.body, "data", "is_management_key"), true);
});

test("a body at the limit is read (the limit is not off by one)", async ({ gw }) => {
  const prefix = `{"name":"n","slug":"${slug()}","unused":"`;
  const suffix = '"}';
  const raw = prefix + "a".repeat(MiB - prefix.length - suffix.length) + suffix;
  assert.is(Buffer.byteLength(raw), MiB);
  const res = await call(gw.url, "POST", "/api/v1/workspaces", { key: gw.key, raw });
  assert.is(res.status, 201, res.text.slice(0, 200));
});

test("path segments are split before percent-decoding: %2F stays inside its segment", async ({ gw }) => {
  const user = `team/${process.pid}/ü`;
  const created = await call(gw.url, "POST", "/api/v1/end-users", { key: gw.key, body: { user } });
  assert.is(created.status, 201, created.text);
  const res = await call(gw.url, "GET", `/api/v1/end-users/${encodeURIComponent(user)}`, { key: gw.key });
  assert.is(res.status, 200, res.text);
  assert.is(at(res.body, "data", "user"), user);
  // Unencoded, the slash separates segments and the path names no route.
  const split = await call(gw.url, "GET", `/api/v1/end-users/team/${process.pid}`, { key: gw.key });
  assert.is(split.status, 404);
});

test("malformed percent-encoding in the path: 400", async ({ gw }) => {
  for (const path of ["/api/v1/end-users/%E0%A4%A", "/api/v1/end-users/%zz", "/api/v1/end-users/%"]) {
    const res = await rawRequest(gw.url, "GET", path, { key: gw.key });
    assert.is(res.status, 400, path);
    assert.is(at(res.body, "error", "code"), 400);
    assert.match(message(res.body), /percent-encoding/, path);
  }
  // A decoded "." or ".." cannot address a resource, however it was spelled.
  for (const path of ["/api/v1/end-users/%2e%2e", "/api/v1/end-users/%2E"]) {
    const res = await rawRequest(gw.url, "GET", path, { key: gw.key });
    assert.is(res.status, 400, path);
    assert.is(at(res.body, "error", "code"), 400);
  }
});

test("nullable fields render null; enums are lowercase wire strings; lists are present", async ({ gw }) => {
  const plain = await call(gw.url, "POST", "/api/v1/workspaces", {
    key: gw.key,
    body: { name: "plain", slug: slug() },
  });
  assert.is(plain.status, 201, plain.text);
  const data = at(plain.body, "data") as Record<string, unknown>;
  assert.ok("updated_at" in data, "updated_at is present before any update");
  assert.is(data.updated_at, null);
  assert.is(data.description, null);
  assert.is(data.default_provider_sort, null);
  assert.match(String(data.default_guardrail_id), /^[0-9a-f-]{36}$/, "never null");
  assert.is(data.disabled_server_tools, null);
  assert.is(data.io_logging_api_key_ids, null);
  assert.is(data.include_byok_in_budgets, false, "non-nullable scalars are always present");
  assert.match(String(data.created_at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

  const full = await call(gw.url, "POST", "/api/v1/workspaces", {
    key: gw.key,
    body: {
      name: "full",
      slug: slug(),
      default_provider_sort: "price",
      disabled_server_tools: ["svc:bash", "svc:web_fetch"],
    },
  });
  assert.is(full.status, 201, full.text);
  assert.is(at(full.body, "data", "default_provider_sort"), "price");
  assert.equal(at(full.body, "data", "disabled_server_tools"), ["svc:bash", "svc:web_fetch"]);

  const budget = await call(
    gw.url,
    "PUT",
    `/api/v1/workspaces/${at(full.body, "data", "slug") as string}/budgets/weekly`,
    { key: gw.key, body: { limit_usd: 5 } },
  );
  assert.is(budget.status, 200, budget.text);
  assert.is(at(budget.body, "data", "reset_interval"), "weekly");
  assert.is(at(budget.body, "data", "limit_usd"), 5);
  assert.is(at(budget.body, "data", "updated_at"), null);

  const badInterval = await call(
    gw.url,
    "PUT",
    `/api/v1/workspaces/${at(full.body, "data", "slug") as string}/budgets/WEEKLY`,
    { key: gw.key, body: { limit_usd: 5 } },
  );
  assert.is(badInterval.status, 400);
  assert.match(message(badInterval.body), /interval/);
});

test("int64 fields render as JSON numbers; unset nullable messages and enums as null", () => {
  const chunk = create(InternChatChunkSchema, {
    id: "c1",
    object: "chat.completion.chunk",
    created: 1_700_000_000n,
    choices: [
      { index: 0, delta: { content: "hi" } },
      { index: 1, delta: {}, finishReason: InternFinishReason.STOP },
    ],
  });
  const json = encodeResponse(InternChatChunkSchema, chunk);
  assert.is(at(json, "created"), 1_700_000_000);
  assert.type(at(json, "created"), "number");
  assert.is(at(json, "usage"), null);
  assert.is(at(json, "choices", 0, "finish_reason"), null);
  assert.is(at(json, "choices", 1, "finish_reason"), "stop");
  assert.is(at(json, "choices", 0, "delta", "content"), "hi");
  assert.is(at(json, "session_id"), undefined, "an unset optional without (nullable) is omitted");

  const withUsage = encodeResponse(
    InternChatChunkSchema,
    create(InternChatChunkSchema, { usage: { promptTokens: 12n, completionTokens: 30n, totalTokens: 42n } }),
  );
  assert.equal(at(withUsage, "usage"), { prompt_tokens: 12, completion_tokens: 30, total_tokens: 42 });
});

test("the error envelope carries metadata only when a reason exists", async ({ gw }) => {
  const plain = await call(gw.url, "POST", "/api/v1/workspaces", { key: gw.key, raw: "{" });
  assert.is(plain.status, 400);
  assert.equal(Object.keys(plain.body as object), ["error"]);
  assert.equal(Object.keys(at(plain.body, "error") as object), ["code", "message"]);

  const unauthenticated = await call(gw.url, "GET", "/api/v1/key");
  assert.is(unauthenticated.status, 401);
  assert.equal(Object.keys(at(unauthenticated.body, "error") as object), ["code", "message"]);

  const tooLarge = await rawRequest(gw.url, "POST", "/api/v1/keys", {
    key: gw.key,
    headers: { "content-type": "application/json", "content-length": String(2 * MiB) },
    body: "{}",
  });
  assert.is(tooLarge.status, 413);
  assert.equal(Object.keys(at(tooLarge.body, "error") as object), ["code", "message", "metadata"]);
  assert.equal(at(tooLarge.body, "error", "metadata"), { reason: "payload_too_large", retryable: false });
});

test.run();
