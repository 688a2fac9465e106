import { generateKeyPairSync } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import * as assert from "uvu/assert";
import { suite } from "../../support/suite.js";
import { writeCatalogFile } from "../../support/catalog-file.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { at, call } from "../../support/http.js";
import { sseData } from "../../support/sse.js";
import { captureLogs, type CapturedLogs } from "../../support/log-lines.js";
import { startMockUpstream, type MockUpstream } from "../../upstream/mock-upstream.js";
import { MOCK_AWS } from "../../upstream/mock-bedrock.js";
import { MOCK_UPSTREAM_API_KEY } from "../../upstream/mock-wire.js";

/**
 * The cloud providers through the whole gateway, as GATEWAY_CONFIG declares them: Azure OpenAI (a
 * deployment with a dated API version), Gemini with an API key, Vertex AI with a service account
 * key file, Bedrock signed with AWS credentials and Bedrock with an API key. Each serves chat,
 * streamed chat, a tool-call round trip, an image part and the Responses and Messages formats;
 * embeddings where the provider has them; usage is billed at the endpoint's prices; a provider's
 * error keeps its status; no credential reaches a log or an answer.
 */
interface Ctx {
  upstream: MockUpstream;
  gw: TestGateway;
  logs: CapturedLogs;
  keyDir: string;
}

const PRICING = { prompt: "0.000001", completion: "0.000002" };
/**
 * Each kind presents a credential of its own (the mock accepts any that extends its key), so that
 * the secrecy check can look for every one of them; Vertex's access token is the mock's key plus
 * `-vertex-<n>` (mock-gemini.ts), Bedrock's SigV4 secret is MOCK_AWS's.
 */
const SECRETS = {
  azure: `${MOCK_UPSTREAM_API_KEY}-azure-7f3c`,
  gemini: `${MOCK_UPSTREAM_API_KEY}-gemini-91ab`,
  bedrockKey: `${MOCK_UPSTREAM_API_KEY}-bedrock-c4d2`,
};
const VERTEX_TOKEN_PREFIX = `${MOCK_UPSTREAM_API_KEY}-vertex-`;
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const { privateKey } = generateKeyPairSync("rsa", {
  modulusLength: 2048,
  privateKeyEncoding: { type: "pkcs8", format: "pem" },
  publicKeyEncoding: { type: "spki", format: "pem" },
});
const KINDS = [
  {
    model: "cloud/azure",
    provider: "azure",
    upstream: "gpt-deployment",
    embed: "cloud/azure-embed",
    embedUpstream: "embed-deployment",
  },
  {
    model: "cloud/gemini",
    provider: "gemini",
    upstream: "gemini-mock",
    embed: "cloud/gemini-embed",
    embedUpstream: "gemini-embedding-mock",
  },
  {
    model: "cloud/vertex",
    provider: "vertex",
    upstream: "gemini-vertex-mock",
    embed: undefined,
    embedUpstream: undefined,
  },
  {
    model: "cloud/bedrock",
    provider: "bedrock",
    upstream: "anthropic.claude-mock-v1:0",
    embed: "cloud/titan",
    embedUpstream: "amazon.titan-embed-text-v2:0",
  },
  {
    model: "cloud/bedrock-key",
    provider: "bedrock-key",
    upstream: "amazon.nova-mock-v1:0",
    embed: undefined,
    embedUpstream: undefined,
  },
] as const;

const test = suite<Ctx>("providers: the cloud kinds through the gateway");

test.before(async (ctx) => {
  ctx.upstream = await startMockUpstream();
  const { upstream } = ctx;
  ctx.keyDir = await fs.mkdtemp(path.join(os.tmpdir(), "gateway-vertex-"));
  const keyFile = path.join(ctx.keyDir, "service-account.json");
  await fs.writeFile(
    keyFile,
    JSON.stringify({
      type: "service_account",
      client_email: "gateway@project.iam.gserviceaccount.com",
      private_key: privateKey,
      token_uri: `${upstream.url}/google/token`,
    }),
  );
  const endpoint = (provider: string, upstreamModel: string) => [
    { provider, upstream_model_id: upstreamModel, pricing: PRICING },
  ];
  const config = await writeCatalogFile({
    providers: [
      {
        slug: "azure",
        kind: "azure",
        base_url: upstream.azureBaseUrl,
        api_key: SECRETS.azure,
        api_version: "2024-10-21",
      },
      { slug: "gemini", kind: "google", base_url: upstream.googleBaseUrl, api_key: SECRETS.gemini },
      {
        slug: "vertex",
        kind: "google",
        base_url: upstream.googleBaseUrl,
        google_service_account: "${VERTEX_KEY_FILE}",
      },
      {
        slug: "bedrock",
        kind: "bedrock",
        base_url: upstream.bedrockBaseUrl,
        aws: { region: MOCK_AWS.region, access_key_id: MOCK_AWS.accessKeyId, secret_access_key: "${AWS_SECRET}" },
      },
      { slug: "bedrock-key", kind: "bedrock", base_url: upstream.bedrockBaseUrl, api_key: SECRETS.bedrockKey },
    ],
    models: [
      ...KINDS.map((k) => ({
        id: k.model,
        name: k.model,
        context_length: 8000,
        input_modalities: ["text", "image"],
        endpoints: endpoint(k.provider, k.upstream),
      })),
      ...KINDS.filter((k) => k.embed).map((k) => ({
        id: k.embed,
        name: k.embed,
        context_length: 8000,
        output_modalities: ["embeddings"],
        endpoints: endpoint(k.provider, k.embedUpstream!),
      })),
    ],
  });
  ctx.logs = captureLogs("debug");
  // GATEWAY_CONFIG's `${…}` references are read from the process's environment.
  process.env.VERTEX_KEY_FILE = keyFile;
  process.env.AWS_SECRET = MOCK_AWS.secretAccessKey;
  ctx.gw = await startTestGateway({ GATEWAY_CONFIG: config }, {}, ctx.logs.log);
});
test.after(async (ctx) => {
  await ctx.gw?.stop();
  await ctx.upstream?.close();
  if (ctx.keyDir) await fs.rm(ctx.keyDir, { recursive: true, force: true });
});
test.before.each(({ upstream }) => upstream.reset());

const chat = ({ gw }: Ctx, body: Record<string, unknown>) =>
  call(gw.url, "POST", "/api/v1/chat/completions", { key: gw.key, body });

for (const kind of KINDS) {
  test(`${kind.provider}: chat answers with usage billed at the endpoint's prices`, async (ctx) => {
    const res = await chat(ctx, {
      model: kind.model,
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hello there" },
      ],
    });
    assert.is(res.status, 200, res.text);
    assert.is(at(res.body, "choices", 0, "message", "content"), `Hello from ${kind.upstream}`);
    const usage = at(res.body, "usage") as { prompt_tokens: number; completion_tokens: number; cost: number };
    assert.ok(usage.prompt_tokens > 0 && usage.completion_tokens > 0);
    assert.ok(
      Math.abs(usage.cost - (usage.prompt_tokens * 0.000001 + usage.completion_tokens * 0.000002)) < 1e-12,
      JSON.stringify(usage),
    );
  });

  test(
    `${kind.provider}: the provider's token counts are billed to the cent: ` +
      "1,000 prompt and 500 completion tokens cost $0.002",
    async (ctx) => {
      ctx.upstream.rule({ usage: { prompt_tokens: 1000, completion_tokens: 500 }, times: 1 });
      const res = await chat(ctx, { model: kind.model, messages: [{ role: "user", content: "Hello there" }] });
      assert.is(res.status, 200, res.text);
      const usage = at(res.body, "usage") as { prompt_tokens: number; completion_tokens: number; cost: number };
      assert.is(usage.prompt_tokens, 1000);
      assert.is(usage.completion_tokens, 500);
      // 1,000 × $0.000001 + 500 × $0.000002
      assert.ok(Math.abs(usage.cost - 0.002) < 1e-12, JSON.stringify(usage));
    },
  );

  test(`${kind.provider}: a streamed chat joins to the reply and ends with [DONE]`, async (ctx) => {
    const res = await chat(ctx, {
      model: kind.model,
      stream: true,
      messages: [{ role: "user", content: "Hello there" }],
    });
    assert.is(res.status, 200, res.text);
    assert.ok(res.text.trimEnd().endsWith("data: [DONE]"));
    const chunks = sseData(res.text).filter(
      (c): c is { choices: Array<{ delta?: { content?: string } }> } =>
        typeof c === "object" && c !== null && "choices" in c,
    );
    assert.is(chunks.map((c) => c.choices[0]?.delta?.content ?? "").join(""), `Hello from ${kind.upstream}`);
  });

  test(`${kind.provider}: a tool call and its result make a round trip; an image part goes up`, async (ctx) => {
    ctx.upstream.rule({ toolCall: { name: "get_weather", arguments: '{"city":"Paris"}' }, times: 1 });
    const tools = [
      {
        type: "function",
        function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
      },
    ];
    const asked = [
      {
        role: "user",
        content: [
          { type: "text", text: "Weather in this photo's city?" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } },
        ],
      },
    ];
    const first = await chat(ctx, { model: kind.model, messages: asked, tools });
    assert.is(first.status, 200, first.text);
    assert.is(at(first.body, "choices", 0, "finish_reason"), "tool_calls");
    const call0 = at(first.body, "choices", 0, "message", "tool_calls", 0) as {
      id: string;
      function: { name: string; arguments: string };
    };
    assert.equal(JSON.parse(call0.function.arguments), { city: "Paris" });
    const second = await chat(ctx, {
      model: kind.model,
      tools,
      messages: [
        ...asked,
        at(first.body, "choices", 0, "message"),
        { role: "tool", tool_call_id: call0.id, content: "sunny" },
      ],
    });
    assert.is(second.status, 200, second.text);
    assert.is(at(second.body, "choices", 0, "finish_reason"), "stop");
    assert.ok(JSON.stringify(ctx.upstream.requests.at(-1)?.body).includes("sunny"), "the tool's result went up");
    assert.ok(JSON.stringify(ctx.upstream.requests[0]?.body).includes(PNG.slice(0, 20)), "the image went up");
  });

  test(`${kind.provider}: the Responses and Messages formats go through the chat pipeline`, async (ctx) => {
    const responses = await call(ctx.gw.url, "POST", "/api/v1/responses", {
      key: ctx.gw.key,
      body: { model: kind.model, input: "Hello there" },
    });
    assert.is(responses.status, 200, responses.text);
    assert.ok(JSON.stringify(responses.body).includes(`Hello from ${kind.upstream}`));
    const messages = await call(ctx.gw.url, "POST", "/api/v1/messages", {
      key: ctx.gw.key,
      body: { model: kind.model, max_tokens: 100, messages: [{ role: "user", content: "Hello there" }] },
    });
    assert.is(messages.status, 200, messages.text);
    assert.is(at(messages.body, "content", 0, "text"), `Hello from ${kind.upstream}`);
  });

  const name = `${kind.provider}: a provider's 429 reaches the caller as 429 with its Retry-After; a 400 as 400`;
  test(name, async (ctx) => {
    ctx.upstream.rule({ status: 429, retryAfter: 9, times: 1 });
    const limited = await chat(ctx, { model: kind.model, messages: [{ role: "user", content: "Hi" }] });
    assert.is(limited.status, 429, limited.text);
    assert.is(limited.headers.get("retry-after"), "9");
    ctx.upstream.rule({ status: 400, times: 1 });
    const bad = await chat(ctx, { model: kind.model, messages: [{ role: "user", content: "Hi" }] });
    assert.is(bad.status, 400, bad.text);
  });

  if (kind.embed) {
    test(`${kind.provider}: embeddings, in input order, billed`, async (ctx) => {
      const res = await call(ctx.gw.url, "POST", "/api/v1/embeddings", {
        key: ctx.gw.key,
        body: { model: kind.embed, input: ["first text", "second text"] },
      });
      assert.is(res.status, 200, res.text);
      const data = at(res.body, "data") as Array<{ index: number; embedding: number[] }>;
      assert.equal(
        data.map((d) => d.index),
        [0, 1],
      );
      assert.ok(data[0]!.embedding.length > 0);
      assert.not.equal(data[0]!.embedding, data[1]!.embedding);
      assert.ok((at(res.body, "usage", "prompt_tokens") as number) > 0);
    });
  }
}

test("gemini: thinking tokens are billed as completion tokens", async (ctx) => {
  // The mock reports the 4 thinking words as thoughtsTokenCount and the 3 answer words as candidatesTokenCount.
  ctx.upstream.rule({ reasoning: "first I weigh this", times: 1 });
  const res = await chat(ctx, { model: "cloud/gemini", messages: [{ role: "user", content: "Hello there" }] });
  assert.is(res.status, 200, res.text);
  const usage = at(res.body, "usage") as {
    prompt_tokens: number;
    completion_tokens: number;
    cost: number;
    completion_tokens_details?: { reasoning_tokens?: number };
  };
  // "Hello there" is 11 characters: the mock counts 3 prompt tokens.
  assert.is(usage.prompt_tokens, 3, JSON.stringify(usage));
  assert.is(usage.completion_tokens, 3 + 4, JSON.stringify(usage));
  assert.is(usage.completion_tokens_details?.reasoning_tokens, 4, JSON.stringify(usage));
  // 3 × $0.000001 + 7 × $0.000002
  assert.ok(Math.abs(usage.cost - 0.000017) < 1e-12, JSON.stringify(usage));
});

test("no credential of any kind reaches a log line or an answer, failures included", async (ctx) => {
  const answers: string[] = [];
  for (const kind of KINDS) {
    const plain = await chat(ctx, { model: kind.model, messages: [{ role: "user", content: "Hello there" }] });
    assert.is(plain.status, 200, plain.text);
    const streamed = await chat(ctx, {
      model: kind.model,
      stream: true,
      messages: [{ role: "user", content: "Hello there" }],
    });
    ctx.upstream.rule({ status: 403, times: 1 });
    const refused = await chat(ctx, { model: kind.model, messages: [{ role: "user", content: "Hello there" }] });
    assert.ok(refused.status >= 400, refused.text);
    answers.push(
      plain.text,
      streamed.text,
      refused.text,
      JSON.stringify([...plain.headers]),
      JSON.stringify([...refused.headers]),
    );
  }
  assert.ok(
    ctx.upstream.requests.some((r) => JSON.stringify(r.headers).includes(VERTEX_TOKEN_PREFIX)),
    "Vertex calls presented an exchanged access token",
  );
  const secrets = [
    SECRETS.azure,
    SECRETS.gemini,
    SECRETS.bedrockKey,
    VERTEX_TOKEN_PREFIX,
    MOCK_AWS.secretAccessKey,
    privateKey.split("\n")[1]!,
  ];
  const logs = ctx.logs.text();
  for (const secret of secrets) {
    assert.not.ok(logs.includes(secret), `a log line holds ${secret.slice(0, 24)}…`);
    for (const answer of answers) assert.not.ok(answer.includes(secret), `an answer holds ${secret.slice(0, 24)}…`);
  }
});

test.run();
