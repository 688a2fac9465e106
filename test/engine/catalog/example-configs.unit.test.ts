import fs from "node:fs/promises";
import path from "node:path";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { loadCatalogFile } from "../../../server/engine/catalog/catalog-file.js";
import { makeTempDir, removeTempDir } from "../../support/temp-dirs.js";

/** The GATEWAY_CONFIG files of examples/ that the README starts users with stay valid. */
const test = suite("models: example configurations");
const examples = path.resolve(import.meta.dirname, "../../../examples");

test(
  "examples/gateway.yaml: " +
    "the README's first chat, one OpenAI-compatible provider with its key from the environment",
  async () => {
    const catalog = await loadCatalogFile(path.join(examples, "gateway.yaml"), { OPENAI_API_KEY: "sk-test" });
    assert.equal([...catalog.providers.keys()], ["openai"]);
    assert.equal(
      catalog.providers.get("openai")?.keys.map((key) => key.secret),
      ["sk-test"],
    );
    assert.equal([...catalog.models.keys()], ["openai/gpt-4o-mini", "openai/text-embedding-3-small"]);
  },
);

test("examples/openai-and-anthropic.yaml: two providers, keys from the environment", async () => {
  const catalog = await loadCatalogFile(path.join(examples, "openai-and-anthropic.yaml"), {
    OPENAI_API_KEY: "sk-test",
    ANTHROPIC_API_KEY: "sk-ant-test",
  });
  assert.equal([...catalog.providers.keys()], ["openai", "anthropic"]);
  assert.equal(
    [...catalog.models.keys()],
    ["openai/gpt-4o-mini", "anthropic/claude-3.5-haiku", "openai/text-embedding-3-small"],
  );
});

test("examples/openai-compatible.yaml: the OpenAI-compatible hosts as plain openai providers", async () => {
  const env = Object.fromEntries(
    ["GROQ", "MISTRAL", "DEEPSEEK", "TOGETHER", "FIREWORKS", "XAI", "OPENROUTER"].map((name) => [
      `${name}_API_KEY`,
      `${name.toLowerCase()}-key`,
    ]),
  );
  const catalog = await loadCatalogFile(path.join(examples, "openai-compatible.yaml"), env);
  assert.equal(
    [...catalog.providers.keys()],
    ["groq", "mistral", "deepseek", "together", "fireworks", "xai", "openrouter", "vllm", "ollama"],
  );
  assert.ok([...catalog.providers.values()].every((provider) => provider.kind === "openai"));
  assert.is(catalog.models.get("meta-llama/llama-3.3-70b-instruct")?.endpoints.length, 3);
});

test(
  "examples/cloud-providers.yaml: " + "Azure, Gemini, Vertex and Bedrock as their kinds, and a pool of two keys",
  async () => {
    // A service-account key, however fake: removed with the test (or at the latest when the process exits).
    const dir = makeTempDir("gateway-example");
    const keyFile = path.join(dir, "key.json");
    await fs.writeFile(
      keyFile,
      JSON.stringify({
        client_email: "sa@p.iam.gserviceaccount.com",
        private_key: "-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----\n",
      }),
    );
    const env = {
      OPENAI_KEY_A: "a",
      OPENAI_KEY_B: "b",
      AZURE_OPENAI_KEY: "az",
      GEMINI_API_KEY: "g",
      GOOGLE_APPLICATION_CREDENTIALS: keyFile,
      AWS_ACCESS_KEY_ID: "AKIA",
      AWS_SECRET_ACCESS_KEY: "secret",
    };
    const catalog = await loadCatalogFile(path.join(examples, "cloud-providers.yaml"), env);
    const kinds = Object.fromEntries([...catalog.providers.values()].map((p) => [p.slug, p.kind]));
    assert.equal(kinds, {
      openai: "openai",
      azure: "azure",
      "google-ai-studio": "google",
      "google-vertex": "google",
      "amazon-bedrock": "bedrock",
    });
    assert.equal(
      catalog.providers.get("openai")?.keys.map((key) => [key.label, key.weight]),
      [
        ["key-1", 3],
        ["key-2", 1],
      ],
    );
    assert.is(catalog.providers.get("azure")?.settings?.apiVersion, "2024-10-21");
    assert.is(
      catalog.providers.get("google-vertex")?.settings?.googleServiceAccount?.clientEmail,
      "sa@p.iam.gserviceaccount.com",
    );
    assert.equal(catalog.providers.get("amazon-bedrock")?.settings?.aws, {
      region: "us-east-1",
      accessKeyId: "AKIA",
      secretAccessKey: "secret",
    });
    await removeTempDir(dir);
  },
);

test("examples/mock.yaml: the test suite's mock provider", async () => {
  const catalog = await loadCatalogFile(path.join(examples, "mock.yaml"), {});
  assert.equal([...catalog.models.keys()], ["mock/chat", "mock/embed"]);
});

test.run();
