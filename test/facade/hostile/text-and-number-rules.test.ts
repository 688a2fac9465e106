import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { DecisionQuestionType, DecisionsService } from "../../../gen/gateway/alpha/decisions_pb.js";
import { BatchEndpoint, BatchesService } from "../../../gen/gateway/v1/batches_pb.js";
import { WorkspacesService } from "../../../gen/gateway/v1/workspaces_pb.js";
import { bearer, createGrpcClient, grpcFailure } from "../../support/grpc-client.js";
import { at, call, rawRequest, type Reply } from "../../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";

/**
 * Hostile text and numbers: text PostgreSQL cannot hold (U+0000, unpaired surrogates) and numbers
 * that are not finite doubles (`1e400` parses as Infinity) are refused with a 400 naming the field,
 * wherever they are: plain fields, list elements, map keys, free-form JSON keys and values at any
 * depth, path and query values, the streamed batch body, and gRPC requests. Never a 500, and
 * never a stored value other than the one sent.
 */
const test = suite<{ env: InferenceGateway }>("hostile input: text and number rules");
test.before(async (ctx) => {
  // The batch runner is off: stored batch items stay as submitted.
  ctx.env = await startInferenceGateway({ GATEWAY_BATCH_CONCURRENCY: "0" });
});
test.after(async (ctx) => ctx.env?.stop());

const NUL = /must not contain NUL characters \(U\+0000\)/;
const NOT_FINITE = /must be a finite number/;

function assertRefused(
  res: Reply | { status: number; body: unknown },
  field: string,
  rule: RegExp,
  what: string,
): void {
  const text = "text" in res ? res.text : JSON.stringify(res.body);
  assert.is(res.status, 400, `${what}: ${text}`);
  assert.is(at(res.body, "error", "code"), 400, `${what}: ${text}`);
  const message = String(at(res.body, "error", "message"));
  assert.ok(message.startsWith(field), `${what}: the message names ${field}: ${message}`);
  assert.match(message, rule, what);
}

const post = (env: InferenceGateway, path: string, raw: string) =>
  call(env.gw.url, "POST", path, { key: env.gw.key, raw });
const CHAT_ITEM_BODY = `{"model":"mock/chat","messages":[{"role":"user","content":"hi"}]}`;
const batchOf = (item: string) =>
  `{"endpoint":"/v1/chat/completions","model":"mock/chat",` +
  `"requests":[{"custom_id":"ok","body":${CHAT_ITEM_BODY}},${item}]}`;

test("NUL in a plain text field is refused, not stored as the two characters \\0", async ({ env }) => {
  const res = await post(
    env,
    "/api/v1/workspaces",
    JSON.stringify({ name: "Nul", slug: "nul-text", description: "before\u0000after" }),
  );
  assertRefused(res, "description", NUL, "workspace description");
  const listed = await call(env.gw.url, "GET", "/api/v1/workspaces", { key: env.gw.key });
  assert.not.ok(listed.text.includes("nul-text"), "nothing was stored");
});

test("NUL in a list element, a path variable and a query value", async ({ env }) => {
  assertRefused(
    await post(env, "/api/v1/guardrails", JSON.stringify({ name: "g", allowed_models: ["mock/chat", "mock/\u0000"] })),
    "allowed_models[1]",
    NUL,
    "list element",
  );
  assertRefused(
    await rawRequest(env.gw.url, "GET", "/api/v1/workspaces/a%00b", { key: env.gw.key }),
    "workspace_ref",
    NUL,
    "path variable",
  );
  assertRefused(
    await rawRequest(env.gw.url, "GET", "/api/v1/batches?after=batch_%00", { key: env.gw.key }),
    "after",
    NUL,
    "query value",
  );
});

test("NUL in free-form JSON: a value and a key at any depth", async ({ env }) => {
  const decision = (state: string) =>
    post(
      env,
      "/api/alpha/decisions",
      `{"model":"mock/chat","state":${state},"questions":{"q":{"type":"noul",` +
        `"instructions":"?","criteria":{"true":"yes","false":"no"}}}}`,
    );
  assertRefused(
    await decision(`{"ticket":{"lines":["ok","a\\u0000b"]}}`),
    "state.ticket.lines[1]",
    NUL,
    "Struct value",
  );
  assertRefused(await decision(`{"ticket":{"a\\u0000b":1}}`), "state.ticket has a key", NUL, "Struct key");
});

test("the streamed batch body: NUL and unpaired surrogates in a custom_id, an item value and an item key", async ({
  env,
}) => {
  const items: Array<[string, string, RegExp]> = [
    [`{"custom_id":"a\\u0000","body":${CHAT_ITEM_BODY}}`, "requests[1].custom_id", NUL],
    [
      `{"custom_id":"b","body":{"model":"mock/chat","messages":[{"role":"user","content":"x\\u0000"}]}}`,
      "requests[1].body.messages[0].content",
      NUL,
    ],
    [
      `{"custom_id":"c","body":{"model":"mock/chat","messages":[{"role":"user",` +
        `"content":"hi"}],"metadata":{"k\\u0000":"v"}}}`,
      "requests[1].body.metadata has a key",
      NUL,
    ],
    [
      `{"custom_id":"d","body":{"model":"mock/chat","messages":[{"role":"user","content":"\\udc00"}]}}`,
      "requests[1].body.messages[0].content",
      /must be well-formed Unicode/,
    ],
  ];
  for (const [item, field, rule] of items)
    assertRefused(await post(env, "/api/v1/batches", batchOf(item)), field, rule, item);
});

test("numbers that are not finite doubles inside free-form JSON are a 400 naming the field", async ({ env }) => {
  const chat = (extra: string) =>
    post(
      env,
      "/api/v1/chat/completions",
      `{"model":"mock/chat","messages":[{"role":"user","content":[{"type":"text","text":"hi","x":1e400}]}]${extra}}`,
    );
  assertRefused(await chat(""), "messages[0].content[0].x", NOT_FINITE, "content part");
  const plain = (extra: string) =>
    post(env, "/api/v1/chat/completions", `{"model":"mock/chat","messages":[{"role":"user","content":"hi"}],${extra}}`);
  assertRefused(await plain(`"stop":["a",-1e400]`), "stop[1]", NOT_FINITE, "stop");
  assertRefused(
    await plain(`"tool_choice":{"type":"function","function":{"name":"f","n":1e999}}`),
    "tool_choice.function.n",
    NOT_FINITE,
    "tool_choice",
  );
  assertRefused(
    await post(env, "/api/v1/embeddings", `{"model":"mock/embed","input":[1e400]}`),
    "input[0]",
    NOT_FINITE,
    "embeddings input",
  );
  assertRefused(
    await post(
      env,
      "/api/alpha/decisions",
      `{"model":"mock/chat","state":{"t":"x"},"questions":{"q":{"type":"score",` +
        `"instructions":"?","criteria":["a",1e400]}}}`,
    ),
    "questions.q.criteria[1]",
    NOT_FINITE,
    "decision criteria",
  );
  assertRefused(
    await post(
      env,
      "/api/v1/batches",
      batchOf(
        `{"custom_id":"n","body":{"model":"mock/chat",` +
          `"messages":[{"role":"user","content":"hi"}],"temperature":1e400}}`,
      ),
    ),
    "requests[1].body.temperature",
    NOT_FINITE,
    "batch item",
  );
});

test("free-form JSON nested deeper than the limit is a 400, on the unary and the streamed path", async ({ env }) => {
  const deep = "[".repeat(10_000) + "]".repeat(10_000);
  const chat = await post(
    env,
    "/api/v1/chat/completions",
    `{"model":"mock/chat","messages":[{"role":"user","content":${deep}}]}`,
  );
  assert.is(chat.status, 400, chat.text);
  assert.is(at(chat.body, "error", "code"), 400);
  assertRefused(
    await post(
      env,
      "/api/v1/batches",
      batchOf(
        `{"custom_id":"deep","body":{"model":"mock/chat","messages":[{"role":"user","content":"hi"}],"x":${deep}}}`,
      ),
    ),
    "requests[1].body is nested",
    /more than 100 levels deep/,
    "batch item",
  );
});

test("gRPC: the same rules for a plain field, a Struct value and a non-finite number", async ({ env }) => {
  const workspaces = createGrpcClient(WorkspacesService, env.gw.grpcUrl);
  const batches = createGrpcClient(BatchesService, env.gw.grpcUrl);
  const decisions = createGrpcClient(DecisionsService, env.gw.grpcUrl);
  try {
    const nul = await grpcFailure(
      workspaces.unary(
        WorkspacesService.method.createWorkspace,
        { name: "Nul", slug: "nul-grpc", description: "a\u0000b" },
        bearer(env.gw.key),
      ),
    );
    assert.is(nul.detail?.httpStatus, 400);
    assert.match(nul.details, /^description must not contain NUL/);
    const body = { model: "mock/chat", messages: [{ role: "user", content: "hi" }], temperature: Number.NaN };
    const nan = await grpcFailure(
      batches.unary(
        BatchesService.method.createBatch,
        { endpoint: BatchEndpoint.CHAT_COMPLETIONS, model: "mock/chat", requests: [{ customId: "a", body }] },
        bearer(env.gw.key),
      ),
    );
    assert.is(nan.detail?.httpStatus, 400);
    assert.match(nan.details, /^requests\[0\]\.body\.temperature must be a finite number/);
    const state = await grpcFailure(
      decisions.unary(
        DecisionsService.method.createDecision,
        {
          model: "mock/chat",
          state: { t: Number.POSITIVE_INFINITY },
          questions: { q: { type: DecisionQuestionType.NOUL, instructions: "?" } },
        },
        bearer(env.gw.key),
      ),
    );
    assert.is(state.detail?.httpStatus, 400);
    assert.match(state.details, /^state\.t must be a finite number/);
  } finally {
    workspaces.close();
    batches.close();
    decisions.close();
  }
});

test(
  "text that can be stored reads back exactly: " +
    "other control characters, astral characters, quotes and backslashes",
  async ({ env }) => {
    const description = 'tab\t newline\n bell\u0007 escape\u001b del\u007f emoji 😀 quote" backslash\\0 \\u0000';
    const created = await post(
      env,
      "/api/v1/workspaces",
      JSON.stringify({ name: "Readback", slug: "readback", description }),
    );
    assert.is(created.status, 201, created.text);
    assert.is(at(created.body, "data", "description"), description);
    const fetched = await call(env.gw.url, "GET", "/api/v1/workspaces/readback", { key: env.gw.key });
    assert.is(at(fetched.body, "data", "description"), description);
  },
);

test.run();
