import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { chatItems, FAST_ENGINE, submit, waitTerminal } from "../../support/batches.js";
import { at, call, type Reply } from "../../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";
import { bodyValidator } from "../../support/openapi.js";
import { sseEvents } from "../../support/sse.js";

/**
 * Real answers of a sample of routes, from a gateway with the mock upstream, validate against the
 * generated document's schemas (ajv, JSON Schema 2020-12), and so do the requests that produced
 * them: the document describes the JSON the facade actually writes and reads.
 */
const test = suite<{ inf: InferenceGateway }>("openapi: real answers validate against the document");
const validator = bodyValidator();

test.before(async (ctx) => {
  ctx.inf = await startInferenceGateway(FAST_ENGINE);
});
test.after(async (ctx) => {
  await ctx.inf.stop();
});

/** Sends a request whose body must fit the document, and checks the answer against it (`key: null`: no key). */
async function exchange(
  inf: InferenceGateway,
  verb: string,
  template: string,
  path: string,
  body?: unknown,
  key: string | null = inf.gw.key,
): Promise<Reply> {
  if (body !== undefined) assert.equal(validator.request(verb, template, body), [], `request of ${verb} ${template}`);
  const res = await call(inf.gw.url, verb, path, {
    ...(key === null ? {} : { key }),
    ...(body === undefined ? {} : { body }),
  });
  assert.equal(
    validator.response(verb, template, res.status, res.body),
    [],
    `${verb} ${path} → ${res.status}: ${res.text.slice(0, 400)}`,
  );
  return res;
}

test("keys: GET /key, POST /keys (201), GET /keys", async ({ inf }) => {
  assert.is((await exchange(inf, "GET", "/api/v1/key", "/api/v1/key")).status, 200);
  const created = await exchange(inf, "POST", "/api/v1/keys", "/api/v1/keys", {
    name: "documented",
    limit: 5,
    limit_reset: "monthly",
  });
  assert.is(created.status, 201, created.text);
  const listed = await exchange(inf, "GET", "/api/v1/keys", "/api/v1/keys?limit=10");
  assert.is(listed.status, 200);
  assert.ok((at(listed.body, "data") as unknown[]).length >= 2);
});

test("workspaces: POST /workspaces (201) and GET /workspaces/{workspace_ref}", async ({ inf }) => {
  const created = await exchange(inf, "POST", "/api/v1/workspaces", "/api/v1/workspaces", {
    name: "Documented",
    slug: "documented",
  });
  assert.is(created.status, 201, created.text);
  assert.is(
    (await exchange(inf, "GET", "/api/v1/workspaces/{workspace_ref}", "/api/v1/workspaces/documented")).status,
    200,
  );
});

test("models: GET /models", async ({ inf }) => {
  const res = await exchange(inf, "GET", "/api/v1/models", "/api/v1/models");
  assert.is(res.status, 200);
  assert.ok((at(res.body, "data") as unknown[]).length > 0);
});

test("chat completions: one JSON body when not streamed", async ({ inf }) => {
  const res = await exchange(inf, "POST", "/api/v1/chat/completions", "/api/v1/chat/completions", {
    model: "mock/chat",
    messages: [{ role: "user", content: "hi" }],
    max_tokens: 16,
  });
  assert.is(res.status, 200, res.text);
  assert.is(at(res.body, "object"), "chat.completion");
});

test("chat completions: every event of a stream fits the event-stream schema", async ({ inf }) => {
  const body = { model: "mock/chat", messages: [{ role: "user", content: "hi" }], stream: true };
  assert.equal(validator.request("POST", "/api/v1/chat/completions", body), []);
  const res = await call(inf.gw.url, "POST", "/api/v1/chat/completions", { key: inf.gw.key, body });
  assert.is(res.status, 200, res.text);
  assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
  const events = sseEvents(res.text).filter((event) => event.data !== "[DONE]");
  assert.ok(events.length > 1);
  for (const { data } of events)
    assert.equal(
      validator.response("POST", "/api/v1/chat/completions", 200, data, "text/event-stream"),
      [],
      JSON.stringify(data),
    );
});

test("batches: POST /batches (raw JSON body, 202) and GET /batches/{id} before and after the end", async ({ inf }) => {
  const body = { endpoint: "/v1/chat/completions", model: "mock/chat", requests: chatItems(2) };
  assert.equal(validator.request("POST", "/api/v1/batches", body), []);
  const accepted = await submit(inf.gw.url, inf.gw.key, body);
  assert.is(accepted.status, 202, accepted.text);
  assert.equal(validator.response("POST", "/api/v1/batches", 202, accepted.body), []);
  const id = String(at(accepted.body, "id"));
  await exchange(inf, "GET", "/api/v1/batches/{id}", `/api/v1/batches/${id}`);
  const done = await waitTerminal(inf.gw.url, inf.gw.key, id);
  assert.is(at(done.body, "status"), "completed", done.text);
  assert.equal(validator.response("GET", "/api/v1/batches/{id}", 200, done.body), [], done.text.slice(0, 400));
});

/** Every header of the gateway's own that a real answer carries is listed on that answer in the document. */
function assertHeadersDocumented(verb: string, template: string, res: Reply): void {
  const ours = [...res.headers.keys()].filter((name) =>
    /^(x-gateway-|x-ratelimit-)|^(x-request-id|retry-after)$/.test(name),
  );
  assert.ok(ours.includes("x-request-id") && ours.includes("x-gateway-overhead-ms"), ours.join(", "));
  const documented = validator.responseHeaders(verb, template, res.status);
  for (const name of ours)
    assert.ok(
      documented.includes(name),
      `${name} of ${verb} ${template} → ${res.status} is not in the document (tools/openapi/headers.ts)`,
    );
}

test("headers: what a real answer carries is documented on it, successes and errors", async ({ inf }) => {
  const body = { model: "mock/chat", messages: [{ role: "user", content: "documented headers" }] };
  const cached = await call(inf.gw.url, "POST", "/api/v1/chat/completions", {
    key: inf.gw.key,
    body,
    headers: { "x-gateway-cache-ttl": "60" },
  });
  assert.is(cached.status, 200, cached.text);
  assert.is(cached.headers.get("x-gateway-cache"), "miss");
  assertHeadersDocumented("POST", "/api/v1/chat/completions", cached);
  assertHeadersDocumented("GET", "/api/v1/key", await call(inf.gw.url, "GET", "/api/v1/key", { key: inf.gw.key }));
  const refused = await call(inf.gw.url, "GET", "/api/v1/key");
  assert.is(refused.status, 401);
  assertHeadersDocumented("GET", "/api/v1/key", refused);
});

test("errors: 404, 400 and 401 answers are the documented error envelope", async ({ inf }) => {
  assert.is((await exchange(inf, "GET", "/api/v1/batches/{id}", "/api/v1/batches/batch_missing")).status, 404);
  const invalid = await call(inf.gw.url, "POST", "/api/v1/keys", { key: inf.gw.key, body: { name: "" } });
  assert.is(invalid.status, 400, invalid.text);
  assert.ok(
    validator.request("POST", "/api/v1/keys", { name: "" }).length > 0,
    "the document refuses what the gateway refuses",
  );
  assert.equal(validator.response("POST", "/api/v1/keys", 400, invalid.body), []);
  assert.is((await exchange(inf, "GET", "/api/v1/keys", "/api/v1/keys", undefined, null)).status, 401);
});

test.run();
