import type { JsonObject } from "@bufbuild/protobuf";
import * as assert from "uvu/assert";
import { suite } from "../../support/suite.js";
import { FAST_ENGINE, submit, waitTerminal } from "../../support/batches.js";
import { keyWith } from "../../support/guardrail-keys.js";
import { at, call, type Reply } from "../../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../../support/inference-gateway.js";

/**
 * Content filters see every string the provider receives, through the mock upstream: the places
 * beyond message text (a tool's description and parameter schema, a message's name, pass-through
 * fields, Responses refusal parts, file contents, Messages tools, batch items), texts in disguise
 * (split by a zero-width space, fullwidth or Arabic-Indic digits), and what no filter can read
 * (token ids, binary files), which a block filter refuses.
 */
const test = suite<{ env: InferenceGateway; blockMail: string; blockSsn: string; redact: string }>(
  "guardrails: content filters scan every string sent upstream",
);
test.before(async (ctx) => {
  ctx.env = await startInferenceGateway(FAST_ENGINE);
  ctx.blockMail = await keyWith(ctx.env, {
    name: "No mail",
    content_filter_builtins: [{ slug: "email", action: "block" }],
  });
  ctx.blockSsn = await keyWith(ctx.env, {
    name: "No SSN",
    content_filter_builtins: [{ slug: "ssn", action: "block" }],
  });
  ctx.redact = await keyWith(ctx.env, {
    name: "Redact",
    content_filter_builtins: [
      { slug: "email", action: "redact" },
      { slug: "ssn", action: "redact" },
    ],
  });
});
test.after(async (ctx) => ctx.env.stop());
test.before.each(({ env }) => env.upstream.reset());

const EMAIL = "jane.planted@example.com";

function post(env: InferenceGateway, key: string, path: string, body: JsonObject): Promise<Reply> {
  return call(env.gw.url, "POST", path, { key, body });
}

function chat(extra: JsonObject, content: JsonObject["content"] = "Hello"): JsonObject {
  return { model: "mock/chat", messages: [{ role: "user", content }], ...extra };
}

/** A 403 from the filter, with no provider call; the refusal does not repeat the value. */
async function assertBlocked(
  env: InferenceGateway,
  key: string,
  path: string,
  body: JsonObject,
  guardrail: string,
  filter: string,
  planted: string,
): Promise<void> {
  const res = await post(env, key, path, body);
  assert.is(res.status, 403, `${path} ${JSON.stringify(body).slice(0, 200)}: ${res.text}`);
  assert.match(
    String(at(res.body, "error", "message")),
    new RegExp(`guardrail '${guardrail}': content filter '${filter}' matched`),
  );
  assert.not.ok(res.text.includes(planted), res.text);
  assert.is(env.upstream.requests.length, 0, "no provider saw it");
}

function sentBody(env: InferenceGateway): string {
  const request = env.upstream.requests.at(-1);
  assert.ok(request, "the upstream was called");
  return JSON.stringify(request.body);
}

test("a tool's description: blocked, or redacted before the provider sees it", async ({ env, blockMail, redact }) => {
  const body = chat({
    tools: [
      {
        type: "function",
        function: { name: "notify", description: `Notifies ${EMAIL}`, parameters: { type: "object", properties: {} } },
      },
    ],
  });
  await assertBlocked(env, blockMail, "/api/v1/chat/completions", body, "No mail", "email", EMAIL);
  const res = await post(env, redact, "/api/v1/chat/completions", body);
  assert.is(res.status, 200, res.text);
  assert.is(at(JSON.parse(sentBody(env)), "tools", 0, "function", "description"), "Notifies [EMAIL]");
});

test("a tool's parameter schema: descriptions, enums, defaults and property names", async ({
  env,
  blockMail,
  redact,
}) => {
  const schemas: JsonObject[] = [
    { type: "object", properties: { to: { type: "string", description: `e.g. ${EMAIL}` } } },
    { type: "object", properties: { to: { type: "string", enum: [EMAIL, "ops"] } } },
    { type: "object", properties: { to: { type: "string", default: EMAIL } } },
    { type: "object", properties: { [EMAIL]: { type: "boolean" } }, required: [EMAIL] },
  ];
  for (const parameters of schemas) {
    await assertBlocked(
      env,
      blockMail,
      "/api/v1/chat/completions",
      chat({ tools: [{ type: "function", function: { name: "notify", parameters } }] }),
      "No mail",
      "email",
      EMAIL,
    );
  }
  const res = await post(
    env,
    redact,
    "/api/v1/chat/completions",
    chat({
      tools: schemas.map((parameters, i) => ({ type: "function", function: { name: `notify${i}`, parameters } })),
    }),
  );
  assert.is(res.status, 200, res.text);
  const sent = sentBody(env);
  assert.not.ok(sent.includes(EMAIL), sent);
  assert.equal(at(JSON.parse(sent), "tools", 3, "function", "parameters"), {
    type: "object",
    properties: { "[EMAIL]": { type: "boolean" } },
    required: ["[EMAIL]"],
  });
});

test("a message's name", async ({ env, blockMail, redact }) => {
  const body = { model: "mock/chat", messages: [{ role: "user", name: EMAIL, content: "Hello" }] };
  await assertBlocked(env, blockMail, "/api/v1/chat/completions", body, "No mail", "email", EMAIL);
  assert.is((await post(env, redact, "/api/v1/chat/completions", body)).status, 200);
  assert.is(at(JSON.parse(sentBody(env)), "messages", 0, "name"), "[EMAIL]");
});

test("an address split by a zero-width space: blocked; redacted in its normal form", async ({
  env,
  blockMail,
  redact,
}) => {
  const split = `jane.planted\u200b@example.com`;
  await assertBlocked(
    env,
    blockMail,
    "/api/v1/chat/completions",
    chat({}, `Write to ${split}`),
    "No mail",
    "email",
    split,
  );
  assert.is((await post(env, redact, "/api/v1/chat/completions", chat({}, `Write to ${split}`))).status, 200);
  assert.is(at(JSON.parse(sentBody(env)), "messages", 0, "content"), "Write to [EMAIL]");
});

test("an SSN in fullwidth or Arabic-Indic digits", async ({ env, blockSsn, redact }) => {
  for (const ssn of ["０７８-０５-１１２０", "٠٧٨-٠٥-١١٢٠"]) {
    await assertBlocked(env, blockSsn, "/api/v1/chat/completions", chat({}, `My SSN is ${ssn}`), "No SSN", "ssn", ssn);
    assert.is((await post(env, redact, "/api/v1/chat/completions", chat({}, `My SSN is ${ssn}.`))).status, 200);
    assert.is(at(JSON.parse(sentBody(env)), "messages", 0, "content"), "My SSN is [SSN].", ssn);
    env.upstream.reset();
  }
});

test("pass-through fields the gateway does not consume (`prediction`, any other)", async ({
  env,
  blockMail,
  redact,
}) => {
  await assertBlocked(
    env,
    blockMail,
    "/api/v1/chat/completions",
    chat({ prediction: { type: "content", content: `Dear ${EMAIL}` } }),
    "No mail",
    "email",
    EMAIL,
  );
  await assertBlocked(
    env,
    blockMail,
    "/api/v1/chat/completions",
    chat({ vendor_options: { notes: [EMAIL] } }),
    "No mail",
    "email",
    EMAIL,
  );
  assert.is(
    (
      await post(
        env,
        redact,
        "/api/v1/chat/completions",
        chat({ prediction: { type: "content", content: `Dear ${EMAIL}` } }),
      )
    ).status,
    200,
  );
  assert.equal(at(JSON.parse(sentBody(env)), "prediction"), { type: "content", content: "Dear [EMAIL]" });
});

test("Responses: a refusal part of an echoed assistant turn", async ({ env, blockMail }) => {
  const body = {
    model: "mock/chat",
    input: [
      { role: "user", content: "Who is it?" },
      { role: "assistant", content: [{ type: "refusal", refusal: `I cannot say it is ${EMAIL}` }] },
      { role: "user", content: "Try again" },
    ],
  };
  await assertBlocked(env, blockMail, "/api/v1/responses", body, "No mail", "email", EMAIL);
});

test(
  "file_data: a text file is decoded and scanned; " +
    "a PDF, which no filter can read, is refused under block (400) and passes under redact",
  async ({ env, blockMail, redact }) => {
    const file = (mediaType: string, text: string) => ({
      type: "file",
      file: { filename: "f", file_data: `data:${mediaType};base64,${Buffer.from(text).toString("base64")}` },
    });
    await assertBlocked(
      env,
      blockMail,
      "/api/v1/chat/completions",
      chat({}, [{ type: "text", text: "Read" }, file("text/plain", `Contact: ${EMAIL}`)]),
      "No mail",
      "email",
      EMAIL,
    );
    const pdf = chat({}, [{ type: "text", text: "Read" }, file("application/pdf", "%PDF-1.7 …")]);
    const refused = await post(env, blockMail, "/api/v1/chat/completions", pdf);
    assert.is(refused.status, 400, refused.text);
    assert.is(at(refused.body, "error", "param"), "messages[0].content[1].file.file_data");
    assert.match(
      String(at(refused.body, "error", "message")),
      /holds application\/pdf content, which content filter 'email' of guardrail 'No mail' cannot scan/,
    );
    assert.is(env.upstream.requests.length, 0);
    assert.is((await post(env, redact, "/api/v1/chat/completions", pdf)).status, 200, "no block filter: it passes");
    assert.is(
      (await post(env, redact, "/api/v1/chat/completions", chat({}, [file("text/csv", `name,mail\nJane,${EMAIL}`)])))
        .status,
      200,
    );
    const sent = at(JSON.parse(sentBody(env)), "messages", 0, "content", 0, "file", "file_data");
    assert.is(sent, `data:text/csv;base64,${Buffer.from("name,mail\nJane,[EMAIL]").toString("base64")}`);
  },
);

test("embeddings sent as token ids: 400 under a block filter, which cannot scan them; they pass under redact", async ({
  env,
  blockMail,
  redact,
}) => {
  for (const input of [
    [1, 2, 3],
    [[1, 2], [3]],
  ]) {
    const res = await post(env, blockMail, "/api/v1/embeddings", { model: "mock/embed", input });
    assert.is(res.status, 400, res.text);
    assert.match(
      String(at(res.body, "error", "message")),
      /input holds token ids, which content filter 'email' of guardrail 'No mail' cannot scan/,
    );
    assert.is(env.upstream.requests.length, 0);
  }
  assert.is((await post(env, redact, "/api/v1/embeddings", { model: "mock/embed", input: [1, 2, 3] })).status, 200);
});

test("Messages: a tool's description and input schema", async ({ env, blockMail, redact }) => {
  const messages = (tool: JsonObject) => ({
    model: "mock/claude",
    max_tokens: 10,
    messages: [{ role: "user", content: "Hi" }],
    tools: [tool],
  });
  await assertBlocked(
    env,
    blockMail,
    "/api/v1/messages",
    messages({ name: "notify", description: `Writes ${EMAIL}`, input_schema: { type: "object" } }),
    "No mail",
    "email",
    EMAIL,
  );
  const schema = { type: "object", properties: { to: { type: "string", description: EMAIL } } };
  await assertBlocked(
    env,
    blockMail,
    "/api/v1/messages",
    messages({ name: "notify", input_schema: schema }),
    "No mail",
    "email",
    EMAIL,
  );
  assert.is(
    (
      await post(
        env,
        redact,
        "/api/v1/messages",
        messages({ name: "notify", description: `Writes ${EMAIL}`, input_schema: schema }),
      )
    ).status,
    200,
  );
  const sent = sentBody(env);
  assert.not.ok(sent.includes(EMAIL), sent);
  assert.ok(sent.includes("Writes [EMAIL]"), sent);
});

test("batches: an item whose tool description holds a blocked value fails with the 403 and is never sent", async ({
  env,
  blockMail,
}) => {
  const tools = [{ type: "function", function: { name: "notify", description: `Writes ${EMAIL}` } }];
  const requests = [
    {
      custom_id: "tool",
      body: { model: "mock/chat", max_tokens: 10, messages: [{ role: "user", content: "Hi" }], tools },
    },
    { custom_id: "plain", body: { model: "mock/chat", max_tokens: 10, messages: [{ role: "user", content: "Hi" }] } },
  ];
  const accepted = await submit(env.gw.url, blockMail, {
    endpoint: "/v1/chat/completions",
    model: "mock/chat",
    requests,
  });
  assert.is(accepted.status, 202, accepted.text);
  const done = await waitTerminal(env.gw.url, blockMail, String(at(accepted.body, "id")));
  assert.equal(at(done.body, "request_counts"), { total: 2, completed: 1, failed: 1 }, done.text);
  const results = at(done.body, "results") as {
    custom_id: string;
    error: { message: string; error_type: string } | null;
  }[];
  const blocked = results.find((r) => r.custom_id === "tool");
  assert.is(blocked?.error?.error_type, "content_filtered");
  assert.match(blocked?.error?.message ?? "", /guardrail 'No mail': content filter 'email'/);
  assert.not.ok(
    JSON.stringify(env.upstream.requests.map((r) => r.body)).includes(EMAIL),
    "the blocked item reached no provider",
  );
});

test("the protocol's own words are not scanned: a custom filter on `user` still lets a conversation through", async ({
  env,
}) => {
  const key = await keyWith(env, {
    name: "Words",
    content_filters: [{ pattern: "(?i)\\buser\\b", label: "[U]", action: "redact" }],
  });
  const res = await post(env, key, "/api/v1/chat/completions", chat({}, "the user said hi"));
  assert.is(res.status, 200, res.text);
  assert.equal(at(JSON.parse(sentBody(env)), "messages"), [{ role: "user", content: "the [U] said hi" }]);
});

test.run();
