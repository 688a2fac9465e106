import * as assert from "uvu/assert";
import { azureChat } from "../../../server/engine/providers/azure/chat.js";
import { collect, failure, mockSuite, signal, targetFor } from "./adapter-helpers.js";
import type { MockUpstream } from "../../upstream/mock-upstream.js";
import type { UpstreamTarget } from "../../../server/engine/providers/provider.js";

const test = mockSuite("providers: Azure OpenAI adapter");

const HELLO = { messages: [{ role: "user", content: "Hello" }] };
const azure = (mock: MockUpstream, apiVersion?: string, overrides: Partial<UpstreamTarget> = {}): UpstreamTarget =>
  targetFor(mock, "azure", "my-gpt4o-deployment", {
    baseUrl: mock.azureBaseUrl,
    ...(apiVersion ? { settings: { apiVersion } } : {}),
    ...overrides,
  });

test("a dated api_version calls the deployment with ?api-version= and the api-key header", async ({ mock }) => {
  const result = await azureChat.chat(azure(mock, "2024-10-21"), HELLO, signal());
  assert.is(
    (result.body.choices as Array<{ message: { content: string } }>)[0]?.message.content,
    "Hello from my-gpt4o-deployment",
  );
  const recorded = mock.requests[0]!;
  assert.is(recorded.path, "/azure/openai/deployments/my-gpt4o-deployment/chat/completions?api-version=2024-10-21");
  assert.is(recorded.headers["api-key"], mock.apiKey);
  assert.is(recorded.headers.authorization, undefined, "Azure keys go in api-key, not a bearer token");
  assert.ok(result.usage && result.usage.promptTokens > 0);
});

test(
  "api_version v1 (and no settings at all, " +
    "as a private endpoint has) uses the /openai/v1 surface with the deployment as model",
  async ({ mock }) => {
    for (const target of [azure(mock, "v1"), azure(mock)]) {
      mock.reset();
      const stream = await azureChat.chatStream(target, HELLO, signal());
      const chunks = await collect(stream);
      assert.ok(chunks.length > 1);
      assert.is(mock.requests[0]?.path, "/azure/openai/v1/chat/completions");
      assert.is((mock.requests[0]?.body as { model?: string } | undefined)?.model, "my-gpt4o-deployment");
      assert.ok(stream.usage());
    }
  },
);

test("embeddings go to the deployment's /embeddings", async ({ mock }) => {
  const result = await azureChat.embeddings(azure(mock, "2024-10-21"), { input: ["a", "b"], dimensions: 4 }, signal());
  assert.is(result.vectors.length, 2);
  assert.is(result.vectors[0]?.length, 4);
  assert.is(mock.requests[0]?.path, "/azure/openai/deployments/my-gpt4o-deployment/embeddings?api-version=2024-10-21");
});

test("a refused key is a 401 that names no key; a deployment's error is mapped with its status", async ({ mock }) => {
  const refused = await failure(
    azureChat.chat(azure(mock, "2024-10-21", { apiKey: "wrong-azure-key" }), HELLO, signal()),
  );
  assert.is(refused.options.status, 401);
  assert.not.ok(refused.message.includes("wrong-azure-key"));
  mock.rule({ status: 429, retryAfter: 7 });
  const limited = await failure(azureChat.chat(azure(mock, "2024-10-21"), HELLO, signal()));
  assert.equal(limited.options, { status: 429, retryAfterS: 7 });
});

test.run();
