import path from "node:path";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { loadGatewayConfig } from "../../server/engine/catalog/gateway-config.js";

/** The GATEWAY_CONFIG files of examples/ that the README starts users with stay valid. */
const test = suite("models: example configurations");
const examples = path.resolve(import.meta.dirname, "../../examples");

test("examples/gateway.yaml: the README's first chat, one OpenAI-compatible provider with its key from the environment", async () => {
  const catalog = await loadGatewayConfig(path.join(examples, "gateway.yaml"), { OPENAI_API_KEY: "sk-test" });
  assert.equal([...catalog.providers.keys()], ["openai"]);
  assert.equal(
    catalog.providers.get("openai")?.keys.map((key) => key.secret),
    ["sk-test"],
  );
  assert.equal([...catalog.models.keys()], ["openai/gpt-4o-mini", "openai/text-embedding-3-small"]);
});

test("examples/openai-and-anthropic.yaml: two providers, keys from the environment", async () => {
  const catalog = await loadGatewayConfig(path.join(examples, "openai-and-anthropic.yaml"), { OPENAI_API_KEY: "sk-test", ANTHROPIC_API_KEY: "sk-ant-test" });
  assert.equal([...catalog.providers.keys()], ["openai", "anthropic"]);
  assert.equal([...catalog.models.keys()], ["openai/gpt-4o-mini", "anthropic/claude-3.5-haiku", "openai/text-embedding-3-small"]);
});

test("examples/mock.yaml: the test suite's mock provider", async () => {
  const catalog = await loadGatewayConfig(path.join(examples, "mock.yaml"), {});
  assert.equal([...catalog.models.keys()], ["mock/chat", "mock/embed"]);
});

test.run();
