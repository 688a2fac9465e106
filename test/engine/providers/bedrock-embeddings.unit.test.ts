import * as assert from "uvu/assert";
import { bedrockChat } from "../../../server/engine/providers/bedrock/chat.js";
import type { UpstreamTarget } from "../../../server/engine/providers/provider.js";
import { MOCK_AWS } from "../../upstream/mock-bedrock.js";
import type { MockUpstream } from "../../upstream/mock-upstream.js";
import { eventually } from "../../support/eventually.js";
import { failure, mockSuite, signal, targetFor } from "./adapter-helpers.js";

const test = mockSuite("providers: Bedrock embeddings");

function bedrock(mock: MockUpstream, model: string): UpstreamTarget {
  return {
    ...targetFor(mock, "bedrock", model, { baseUrl: mock.bedrockBaseUrl }),
    apiKey: MOCK_AWS.secretAccessKey,
    settings: { aws: { ...MOCK_AWS } },
  };
}

test("Titan Text Embeddings v2: one signed invoke per input, vectors in input order, token counts summed", async ({
  mock,
}) => {
  const inputs = ["alpha", "beta beta", "gamma gamma gamma", "delta", "epsilon epsilon"];
  const result = await bedrockChat.embeddings(
    bedrock(mock, "amazon.titan-embed-text-v2:0"),
    { input: inputs, dimensions: 4 },
    signal(),
  );
  assert.is(mock.requests.length, inputs.length);
  assert.ok(mock.requests.every((r) => r.path === "/bedrock/model/amazon.titan-embed-text-v2%3A0/invoke"));
  const sent = mock.requests.map((r) => r.body as Record<string, unknown>);
  assert.equal(sent.map((b) => b.inputText).sort(), [...inputs].sort());
  assert.ok(sent.every((b) => b.dimensions === 4 && b.normalize === true));
  assert.is(result.vectors.length, inputs.length);
  // Each vector is the one the mock derives from its own input.
  for (const [i, input] of inputs.entries()) {
    const single = await bedrockChat.embeddings(
      bedrock(mock, "amazon.titan-embed-text-v2:0"),
      { input, dimensions: 4 },
      signal(),
    );
    assert.equal(result.vectors[i], single.vectors[0]);
  }
  assert.is(
    result.promptTokens,
    inputs.reduce((sum, text) => sum + Math.ceil(text.length / 4), 0),
  );
});

test("Cohere Embed: one call for the texts with an input type; tokens from the header", async ({ mock }) => {
  const result = await bedrockChat.embeddings(
    bedrock(mock, "cohere.embed-english-v3"),
    { input: ["one", "two two"], input_type: "search_query" },
    signal(),
  );
  assert.is(mock.requests.length, 1);
  assert.equal(mock.requests[0]?.body, { texts: ["one", "two two"], input_type: "search_query" });
  assert.is(result.vectors.length, 2);
  assert.is(result.promptTokens, 1 + 2);
});

test("other families and token inputs are unsupported, before any call", async ({ mock }) => {
  const other = await failure(
    bedrockChat.embeddings(bedrock(mock, "mistral.mistral-embed-mock"), { input: "x" }, signal()),
  );
  assert.is(other.failure, "unsupported");
  assert.match(other.message, "mistral");
  const tokens = await failure(
    bedrockChat.embeddings(bedrock(mock, "amazon.titan-embed-text-v2:0"), { input: [1, 2, 3] }, signal()),
  );
  assert.is(tokens.failure, "unsupported");
  assert.is(mock.requests.length, 0);
});

test("a failing input fails the call with Bedrock's status", async ({ mock }) => {
  mock.rule({ status: 429, times: 1 });
  const error = await failure(
    bedrockChat.embeddings(bedrock(mock, "amazon.titan-embed-text-v2:0"), { input: ["a", "b", "c"] }, signal()),
  );
  assert.equal([error.failure, error.options.status], ["status", 429]);
  // The other inputs' calls were in flight when the first failed: they land here, not in the next test.
  await eventually(() => mock.requests.length, "every input's call reached Bedrock", { until: (calls) => calls === 3 });
});

test.run();
