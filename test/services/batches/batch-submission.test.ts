import http from "node:http";
import { create, type JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import pg from "pg";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { BatchEndpoint, BatchesService } from "../../../gen/gateway/v1/batches_pb.js";
import { ErrorDetailSchema } from "../../../gen/gateway/v1/errors_pb.js";
import { HttpBodySchema } from "../../../gen/google/api/httpbody_pb.js";
import { chatItems, submit } from "../../support/batches.js";
import { eventually } from "../../support/eventually.js";
import { bearer, createGrpcClient, grpcFailure, type GrpcClient } from "../../support/grpc-client.js";
import { at, call, rawRequest } from "../../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";
import { startRemoteFacade, type RemoteFacade } from "../../support/remote-facade.js";

/**
 * POST /batches is streamed (CreateBatchFromJson): the JSON body is split into items as it
 * arrives and written in chunks inside one transaction, so neither the facade nor the core holds
 * it whole. What is stored must not depend on the way in (REST through the in-process transport,
 * REST through a remote facade over gRPC, gRPC CreateBatch with Struct bodies), nor on how the
 * body is sliced; a body that turns out bad anywhere stores nothing. The runner is off here, so
 * the stored items stay as submitted.
 */
interface Context {
  env: InferenceGateway;
  remote: RemoteFacade;
  grpc: GrpcClient;
}

const test = suite<Context>("batch submission, streamed");
test.before(async (ctx) => {
  ctx.env = await startInferenceGateway({ GATEWAY_BATCH_CONCURRENCY: "0" });
  ctx.remote = await startRemoteFacade(Number(new URL(ctx.env.gw.grpcUrl).port));
  ctx.grpc = createGrpcClient(BatchesService, ctx.env.gw.grpcUrl);
});
test.after(async (ctx) => {
  ctx.grpc?.close();
  await ctx.remote?.close();
  await ctx.env?.stop();
});

const CHAT = "/v1/chat/completions";

async function query<T>(databaseUrl: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client(databaseUrl);
  await client.connect();
  try {
    return (await client.query(text, values)).rows as T[];
  } finally {
    await client.end();
  }
}

interface StoredItem {
  idx: number;
  custom_id: string;
  body: JsonObject;
}

const storedItems = (env: InferenceGateway, batchId: string) =>
  query<StoredItem>(
    env.gw.databaseUrl,
    "SELECT idx, custom_id, body FROM batch_items WHERE batch_id = $1 ORDER BY idx",
    [batchId],
  );

const counts = async (env: InferenceGateway) => {
  const [row] = await query<{ batches: number; items: number }>(
    env.gw.databaseUrl,
    "SELECT (SELECT count(*) FROM batches)::int AS batches, (SELECT count(*) FROM batch_items)::int AS items",
  );
  return row!;
};

/** Items with varied bodies: nested objects, unicode, numbers, tools, each with its own `model`. */
function variedItems(count: number, prefix = "v"): { custom_id: string; body: JsonObject }[] {
  return Array.from({ length: count }, (_, i) => ({
    custom_id: `${prefix}-${i}`,
    body: {
      model: "mock/chat",
      messages: [
        { role: "system", content: `Be brief ${"é😀".repeat(i % 3)}` },
        { role: "user", content: `Question number ${i} with "quotes", a \\ backslash and a\nnewline` },
      ],
      max_tokens: 16 + (i % 5),
      temperature: 0.25,
      metadata: { n: i, nested: { list: [1, 2.5, null, true, "x"] } },
    },
  }));
}

/**
 * Sends `body` to POST /api/v1/batches in slices of `slice` bytes, with a pause between them, so
 * that the gateway sees the body arrive in many pieces; `cut` ends the request after that many
 * bytes by destroying the socket.
 */
function sendSliced(
  base: string,
  key: string,
  body: string,
  slice: number,
  options: { cut?: number; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: unknown } | "cut"> {
  const url = new URL(base);
  const bytes = Buffer.from(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: "POST",
        path: "/api/v1/batches",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...options.headers },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, body: text ? (JSON.parse(text) as unknown) : undefined }),
        );
      },
    );
    req.on("error", (err) => (options.cut === undefined ? reject(err) : resolve("cut")));
    let sent = 0;
    const end = options.cut ?? bytes.length;
    const pump = () => {
      if (sent >= end) {
        if (options.cut === undefined) req.end();
        else {
          req.destroy();
          resolve("cut");
        }
        return;
      }
      const next = Math.min(end, sent + slice);
      req.write(bytes.subarray(sent, next));
      sent = next;
      setImmediate(pump);
    };
    pump();
  });
}

test("REST, REST over a remote facade, gRPC CreateBatch and gRPC CreateBatchFromJson store the same items", async ({
  env,
  remote,
  grpc,
}) => {
  const items = variedItems(30);
  const body = { endpoint: CHAT, model: "mock/chat", provider: { only: ["mockai"] }, requests: items };
  const direct = await submit(env.gw.url, env.gw.key, body);
  assert.is(direct.status, 202, direct.text);
  assert.is(at(direct.body, "status"), "validating");
  assert.equal(at(direct.body, "request_counts"), { completed: 0, failed: 0, total: 30 });
  const viaRemote = await submit(remote.url, env.gw.key, body);
  assert.is(viaRemote.status, 202, viaRemote.text);

  const unary = await grpc.unary(
    BatchesService.method.createBatch,
    {
      endpoint: BatchEndpoint.CHAT_COMPLETIONS,
      model: "mock/chat",
      provider: { only: ["mockai"] },
      requests: items.map((i) => ({ customId: i.custom_id, body: i.body })),
    },
    bearer(env.gw.key),
  );
  assert.is(unary.requestCounts?.total, 30);

  const streaming = createClient(BatchesService, createGrpcTransport({ baseUrl: env.gw.grpcUrl }));
  const json = Buffer.from(JSON.stringify(body));
  async function* slices() {
    for (let at = 0; at < json.length; at += 1000)
      yield create(HttpBodySchema, {
        contentType: at === 0 ? "application/json" : "",
        data: json.subarray(at, at + 1000),
      });
  }
  const fromJson = await streaming.createBatchFromJson(slices(), { headers: bearer(env.gw.key) });
  assert.is(fromJson.requestCounts?.total, 30);

  const expected = items.map((item, idx) => ({ idx, custom_id: item.custom_id, body: item.body }));
  for (const id of [String(at(direct.body, "id")), String(at(viaRemote.body, "id")), unary.id, fromJson.id]) {
    assert.equal(await storedItems(env, id), expected, id);
  }
  const [row] = await query<{ provider_only: string[]; total: number }>(
    env.gw.databaseUrl,
    "SELECT provider_only, total FROM batches WHERE id = $1",
    [unary.id],
  );
  assert.equal(row, { provider_only: ["mockai"], total: 30 });
});

test("the same Idempotency-Key over REST and gRPC names one batch; another body is 409 on either", async ({
  env,
  grpc,
}) => {
  const items = variedItems(5, "idem");
  const rest = await submit(
    env.gw.url,
    env.gw.key,
    { endpoint: CHAT, model: "mock/chat", requests: items },
    { "idempotency-key": "across" },
  );
  assert.is(rest.status, 202, rest.text);
  const again = await grpc.unary(
    BatchesService.method.createBatch,
    {
      endpoint: BatchEndpoint.CHAT_COMPLETIONS,
      model: "mock/chat",
      requests: items.map((i) => ({ customId: i.custom_id, body: i.body })),
    },
    { ...bearer(env.gw.key), "idempotency-key": "across" },
  );
  assert.is(again.id, at(rest.body, "id"));
  const other = await grpcFailure(
    grpc.unary(
      BatchesService.method.createBatch,
      {
        endpoint: BatchEndpoint.CHAT_COMPLETIONS,
        model: "mock/chat",
        requests: [{ customId: "x", body: items[0]!.body }],
      },
      { ...bearer(env.gw.key), "idempotency-key": "across" },
    ),
  );
  assert.is(other.detail?.httpStatus, 409);
  // Same items in a different order is another request.
  const reordered = await submit(
    env.gw.url,
    env.gw.key,
    { endpoint: CHAT, model: "mock/chat", requests: [...items].reverse() },
    { "idempotency-key": "across" },
  );
  assert.is(reordered.status, 409, reordered.text);
});

test(
  "a large body in small slices is stored item by item, in order, whatever the field order; " + "several at once",
  async ({ env }) => {
    // More items than one chunk, so the transaction opens while the body still arrives.
    const items = chatItems(5_000, "mock/chat", "big");
    const headerFirst = JSON.stringify({ endpoint: CHAT, model: "mock/chat", requests: items });
    const requestsFirst =
      `{"requests":${JSON.stringify(items)},"completionWindow":"24h",` + `"model":"mock/chat","endpoint":"${CHAT}"}`;
    // Six at once: more than the submissions that may hold a connection while their body arrives.
    const bodies = [headerFirst, requestsFirst, headerFirst, requestsFirst, headerFirst, headerFirst];
    const replies = await Promise.all(
      bodies.map((body, i) => sendSliced(env.gw.url, env.gw.key, body, 4096 + 997 * i)),
    );
    for (const reply of replies) {
      assert.is.not(reply, "cut");
      if (reply === "cut") continue;
      assert.is(reply.status, 202, JSON.stringify(reply.body));
      assert.equal(
        await storedItems(env, String(at(reply.body, "id"))),
        items.map((item, idx) => ({ idx, custom_id: item.custom_id, body: item.body })),
      );
    }
  },
);

test("bad JSON in the middle of a large body: 400 naming the problem and where, nothing stored", async ({ env }) => {
  const before = await counts(env);
  const items = JSON.stringify(chatItems(4_500, "mock/chat", "mid"));
  // The 4,001st item is cut short by a stray bracket, after two chunks went to the database.
  const broken =
    `{"endpoint":"${CHAT}","model":"mock/chat",` +
    `"requests":${items.slice(0, -1)},{"custom_id":"bad","body":{"messages":[}]}`;
  const reply = await sendSliced(env.gw.url, env.gw.key, broken, 16 * 1024);
  assert.is.not(reply, "cut");
  if (reply === "cut") return;
  assert.is(reply.status, 400, JSON.stringify(reply.body));
  assert.is(at(reply.body, "error", "code"), 400);
  assert.match(
    String(at(reply.body, "error", "message")),
    /^Malformed JSON body: requests\[4500\] \(from byte \d+\): /,
  );

  const truncated = await sendSliced(
    env.gw.url,
    env.gw.key,
    `{"endpoint":"${CHAT}","model":"mock/chat","requests":${items.slice(0, -200)}`,
    16 * 1024,
  );
  assert.is.not(truncated, "cut");
  if (truncated !== "cut") {
    assert.is(truncated.status, 400);
    assert.match(
      String(at(truncated.body, "error", "message")),
      /^Malformed JSON body: the body ends before its JSON object is complete inside requests\[\d+\]/,
    );
  }

  const garbage = await sendSliced(
    env.gw.url,
    env.gw.key,
    `{"endpoint":"${CHAT}","model":"mock/chat","requests":${items.slice(0, -1)}} x`,
    16 * 1024,
  );
  assert.is.not(garbage, "cut");
  if (garbage !== "cut") {
    assert.is(garbage.status, 400);
    assert.match(
      String(at(garbage.body, "error", "message")),
      /^Malformed JSON body: expected ',' or ']' after requests\[4499\] at byte \d+, found '}'/,
    );
  }

  // An item that is valid JSON but not a valid request, late in the body.
  const late = chatItems(4_500, "mock/chat", "late");
  late[4_321] = { custom_id: "late-x", body: { model: "mock/chat", messages: [] } };
  const invalid = await submit(env.gw.url, env.gw.key, { endpoint: CHAT, model: "mock/chat", requests: late });
  assert.is(invalid.status, 400, invalid.text);
  assert.match(
    String(at(invalid.body, "error", "message")),
    /^requests\[4321\]\.body\.messages must be a non-empty array/,
  );
  assert.equal(await counts(env), before);
});

test("a client that goes away mid-body stores nothing, and does not keep its connection or slot", async ({ env }) => {
  const before = await counts(env);
  const body = JSON.stringify({ endpoint: CHAT, model: "mock/chat", requests: chatItems(5_000, "mock/chat", "gone") });
  // More cut uploads than there are slots for submissions with an open transaction.
  for (let i = 0; i < 6; i++)
    assert.is(await sendSliced(env.gw.url, env.gw.key, body, 32 * 1024, { cut: Math.floor(body.length * 0.8) }), "cut");
  // Each cut upload's transaction is rolled back (the slot it held is given back with it).
  const openTransactions = () =>
    query<{ n: number }>(
      env.gw.databaseUrl,
      "SELECT count(*)::int AS n FROM pg_stat_activity " +
        "WHERE state LIKE 'idle in transaction%' AND datname = current_database()",
    ).then(([row]) => row!.n);
  // Polled until none is open: a leaked one stays open for good, while the gateway's own workers
  // open short transactions now and then, so one more look after a zero could catch one of those.
  await eventually(openTransactions, "every cut upload's transaction is rolled back", { until: (n) => n === 0 });
  assert.equal(await counts(env), before);
  const after = await sendSliced(env.gw.url, env.gw.key, body, 64 * 1024);
  assert.is.not(after, "cut");
  if (after !== "cut") assert.is(after.status, 202);
});

test("the JSON rules of the facade hold on the streamed route", async ({ env }) => {
  const expect = async (raw: string, status: number, message: RegExp) => {
    const res = await call(env.gw.url, "POST", "/api/v1/batches", { key: env.gw.key, raw });
    assert.is(res.status, status, `${raw.slice(0, 80)}: ${res.text}`);
    assert.match(String(at(res.body, "error", "message")), message, raw.slice(0, 80));
  };
  const item = `{"custom_id":"a","body":{"messages":[{"role":"user","content":"x"}]}}`;
  const head = `"endpoint":"${CHAT}","model":"mock/chat"`;
  await expect(`[${item}]`, 400, /must be a JSON object/);
  await expect(`{${head},"requests":{}}`, 400, /^requests must be an array/);
  await expect(`{${head},"requests":[null]}`, 400, /^requests\[0\] must not be null/);
  await expect(`{${head},"requests":[${item},7]}`, 400, /^requests\[1\] must be an object/);
  await expect(`{${head},"requests":[{"custom_id":5,"body":{}}]}`, 400, /^requests\[0\]\.custom_id must be a string/);
  await expect(`{${head},"requests":[{"custom_id":"a","body":[]}]}`, 400, /^requests\[0\]\.body must be an object/);
  await expect(`{${head},"requests":[{"custom_id":"a"}]}`, 400, /^requests\[0\]\.body is required/);
  await expect(`{${head},"requests":[{"custom_id":"","body":{}}]}`, 400, /^requests\[0\]\.custom_id is required/);
  await expect(
    `{${head},"requests":[{"custom_id":"\\ud800","body":{}}]}`,
    400,
    /^requests\[0\]\.custom_id must be well-formed Unicode/,
  );
  await expect(
    `{${head},"model":"mock/chat","requests":[${item}]}`,
    400,
    /^Malformed JSON body: the field 'model' is given twice/,
  );
  await expect(
    `{${head},"requests":[${item}],"requests":[${item}]}`,
    400,
    /^Malformed JSON body: the field 'requests' is given twice/,
  );
  await expect(`{"endpoint":"/v1/nothing","model":"mock/chat","requests":[${item}]}`, 400, /^endpoint must be one of/);
  await expect(`{"model":"mock/chat","requests":[${item}]}`, 400, /^endpoint is required/);
  await expect(`{${head},"requests":[]}`, 400, /^requests is required/);
  await expect(`{${head}}`, 400, /^requests is required/);
  await expect(``, 400, /^endpoint is required/);
  await expect(`{${head},"requests":[${item}],"completion_window":"48h"}`, 400, /^completion_window must be one of/);
  // What PostgreSQL cannot store is refused as input, not failed as an insert.
  await expect(
    `{${head},"requests":[{"custom_id":"a","body":{"messages":[{"role":"user","content":"\\u0000"}]}}]}`,
    400,
    /^requests\[0\]\.body\.messages\[0\]\.content must not contain NUL/,
  );
  await expect(
    `{${head},"requests":[{"custom_id":"a","body":{"messages":[{"role":"user","content":"\\udc00"}]}}]}`,
    400,
    /^requests\[0\]\.body\.messages\[0\]\.content must be well-formed Unicode/,
  );
  await expect(
    `{${head},"requests":[{"custom_id":"a\\u0000","body":{"messages":[{"role":"user","content":"x"}]}}]}`,
    400,
    /^requests\[0\]\.custom_id must not contain NUL/,
  );

  // lowerCamel names, unknown fields and nulls as elsewhere.
  const ok = await call(env.gw.url, "POST", "/api/v1/batches", {
    key: env.gw.key,
    raw:
      `{"unknown":{"deep":[1]},"completionWindow":null,${head},"provider":{"only":["mockai"]},` +
      `"requests":[{"customId":"c","body":{"messages":[{"role":"user","content":"x"}]},"extra":1}]}`,
  });
  assert.is(ok.status, 202, ok.text);
  assert.equal(
    (await storedItems(env, String(at(ok.body, "id")))).map((r) => r.custom_id),
    ["c"],
  );
});

test("413: a declared Content-Length over 200 MB before reading, and a body that grows past it", async ({ env }) => {
  const declared = await rawRequest(env.gw.url, "POST", "/api/v1/batches", {
    key: env.gw.key,
    headers: { "content-type": "application/json", "content-length": String(209_715_201) },
    body: "{}",
  });
  assert.is(declared.status, 413);
  assert.is(declared.headers.connection, "close");
  assert.equal(at(declared.body, "error", "metadata"), { reason: "payload_too_large", retryable: false });

  // 200 MB of whitespace inside the object: nothing to hold, so only the limit stops it.
  const grown = await new Promise<{ status: number; body: unknown }>((resolve, reject) => {
    const url = new URL(env.gw.url);
    let answered = false;
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: "POST",
        path: "/api/v1/batches",
        headers: { authorization: `Bearer ${env.gw.key}`, "content-type": "application/json" },
      },
      (res) => {
        answered = true;
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        const done = () =>
          resolve({ status: res.statusCode ?? 0, body: text ? (JSON.parse(text) as unknown) : undefined });
        res.on("end", done);
        res.on("error", done);
      },
    );
    req.on("error", (err) => {
      if (!answered) reject(err);
    });
    req.write("{");
    const spaces = Buffer.alloc(256 * 1024, " ");
    let sent = 1;
    const pump = () => {
      while (sent <= 209_715_200 + spaces.length && !answered && !req.destroyed) {
        sent += spaces.length;
        if (!req.write(spaces)) {
          req.once("drain", pump);
          return;
        }
      }
      if (!req.destroyed && !answered) req.end("}");
    };
    pump();
  });
  assert.is(grown.status, 413);
  assert.equal(at(grown.body, "error", "metadata"), { reason: "payload_too_large", retryable: false });
});

test("gRPC CreateBatchFromJson answers bad JSON with INVALID_ARGUMENT and the HTTP status in the detail", async ({
  env,
}) => {
  const client = createClient(BatchesService, createGrpcTransport({ baseUrl: env.gw.grpcUrl }));
  async function* slices() {
    yield create(HttpBodySchema, {
      contentType: "application/json",
      data: Buffer.from(`{"endpoint":"${CHAT}","model":"mock/chat","requests":[{"custom_id":"a",`),
    });
    yield create(HttpBodySchema, { data: Buffer.from(`"body":{"messages":[}}]}`) });
  }
  try {
    await client.createBatchFromJson(slices(), { headers: bearer(env.gw.key) });
    assert.unreachable("a malformed body must fail");
  } catch (err) {
    assert.instance(err, ConnectError);
    const error = err as ConnectError;
    assert.is(error.code, Code.InvalidArgument);
    assert.match(error.rawMessage, /^Malformed JSON body: requests\[0\] \(from byte 67\): /);
    assert.is(error.findDetails(ErrorDetailSchema)[0]?.httpStatus, 400);
  }
});

test.run();
