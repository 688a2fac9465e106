import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { loadCatalogFile } from "../../../server/engine/catalog/catalog-file.js";
import { makeTempDir, removeTempDir } from "../../support/temp-dirs.js";
import { poolKey } from "../../../server/engine/key-pools/pool-key.js";
import { assertRejects, config, ENV, load, provider, SECRET } from "./catalog-config-fixture.js";

/**
 * GATEWAY_CONFIG read as JSON or YAML: the defaults filled in, the environment substituted, files
 * that cannot be read.
 */
const test = suite("catalog config: loading");

test("no file: an empty catalog", async () => {
  const catalog = await loadCatalogFile(undefined, ENV);
  assert.is(catalog.providers.size, 0);
  assert.is(catalog.models.size, 0);
  assert.is(catalog.regionalHostnames.size, 0);
});

test("JSON: every default filled in, ${VAR} replaced from the environment", async () => {
  const catalog = await load(config());
  const openai = catalog.providers.get("openai")!;
  assert.equal(openai, {
    slug: "openai",
    name: "openai",
    kind: "openai",
    baseUrl: "https://api.openai.com/v1",
    keys: [poolKey(SECRET, 1, 0)],
    timeoutMs: 60000,
    nativeBatches: false,
  });
  const gpt = catalog.models.get("openai/gpt-4o")!;
  assert.equal(
    { ...gpt, endpoints: [] },
    {
      id: "openai/gpt-4o",
      canonicalSlug: "openai/gpt-4o",
      name: "GPT-4o",
      description: "",
      created: 0,
      contextLength: 128000,
      inputModalities: ["text"],
      outputModalities: ["text"],
      tokenizer: "Other",
      instructType: null,
      supportedVoices: null,
      defaultParameters: null,
      perRequestLimits: null,
      expirationDate: null,
      knowledgeCutoff: null,
      isModerated: false,
      endpoints: [],
    },
  );
  assert.equal(gpt.endpoints, [
    {
      id: "openai/gpt-4o@openai",
      modelId: "openai/gpt-4o",
      providerSlug: "openai",
      providerName: "openai",
      tag: "openai",
      upstreamModelId: "gpt-4o",
      contextLength: 128000,
      maxCompletionTokens: null,
      maxPromptTokens: null,
      quantization: null,
      pricing: { prompt: "0.0000025", completion: "0.00001", image: "0", request: "0" },
      supportedParameters: [
        "temperature",
        "top_p",
        "max_tokens",
        "stop",
        "frequency_penalty",
        "presence_penalty",
        "seed",
        "logit_bias",
        "logprobs",
        "top_logprobs",
        "response_format",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
      ],
      supportsImplicitCaching: false,
      region: "global",
      zdr: false,
      dataCollection: "deny",
    },
  ]);
});

/** The first endpoint's prices in every field the catalog reads, as a YAML flow mapping. */
const SONNET_PRICING =
  '{ prompt: "0.000003", completion: "0.000015", image: "0.0048", request: "0.001", ' +
  'input_cache_read: "0.0000003", input_cache_write: "0.00000375" }';

test("YAML (.yaml and .yml): every field, provider defaults inherited, tags, regional hosts", async () => {
  const yaml = `
providers:
  - slug: anthropic-eu
    name: Anthropic EU
    kind: anthropic
    base_url: https://\${EU_HOST}/
    api_key: \${ANTHROPIC_KEY}
    timeout_ms: 5000
    region: europe
    zdr: true
    data_collection: allow
models:
  - id: anthropic/claude-sonnet
    canonical_slug: anthropic/claude-sonnet-2025-05-14
    name: Claude Sonnet
    description: A model.
    created: 2025-05-14
    context_length: 200000
    input_modalities: [text, image]
    tokenizer: Claude
    instruct_type: claude
    default_parameters: { temperature: 1 }
    per_request_limits: { prompt_tokens: 1000 }
    expiration_date: 2026-01-31
    knowledge_cutoff: 2025-03
    is_moderated: true
    endpoints:
      - provider: anthropic-eu
        upstream_model_id: claude-sonnet-4
        pricing: ${SONNET_PRICING}
      - provider: anthropic-eu
        tag: anthropic-eu/batch
        upstream_model_id: claude-sonnet-4-batch
        pricing: { prompt: "0.0000015", completion: "0.0000075" }
        context_length: 100000
        max_completion_tokens: 64000
        max_prompt_tokens: 90000
        quantization: bf16
        supported_parameters: [temperature, max_tokens]
        supports_implicit_caching: true
        region: us
        zdr: false
        data_collection: deny
  - id: openai/text-embedding-3-small
    name: Embeddings
    created: 1700000000
    context_length: 8191
    output_modalities: [embeddings]
    endpoints:
      - { provider: anthropic-eu, upstream_model_id: e, pricing: { prompt: "0.00000002", completion: "0" } }
regional_hosts:
  EU.Gateway.Example: europe
  us.gateway.example: us
`;
  for (const extension of ["yaml", "yml"]) {
    const catalog = await load(yaml, extension);
    assert.equal(catalog.providers.get("anthropic-eu"), {
      slug: "anthropic-eu",
      name: "Anthropic EU",
      kind: "anthropic",
      baseUrl: "https://eu.upstream.example",
      keys: [poolKey(ENV.ANTHROPIC_KEY, 1, 0)],
      timeoutMs: 5000,
      nativeBatches: false,
    });
    const claude = catalog.models.get("anthropic/claude-sonnet")!;
    assert.is(claude.canonicalSlug, "anthropic/claude-sonnet-2025-05-14");
    assert.is(claude.created, Date.UTC(2025, 4, 14) / 1000);
    assert.equal(claude.inputModalities, ["text", "image"]);
    assert.equal(claude.defaultParameters, { temperature: 1 });
    assert.equal(claude.perRequestLimits, { prompt_tokens: 1000 });
    assert.is(claude.expirationDate, "2026-01-31");
    assert.is(claude.knowledgeCutoff, "2025-03");
    assert.is(claude.isModerated, true);
    const [main, batch] = claude.endpoints;
    assert.is(main!.id, "anthropic/claude-sonnet@anthropic-eu");
    assert.equal([main!.region, main!.zdr, main!.dataCollection], ["europe", true, "allow"], "provider defaults");
    assert.equal(main!.supportedParameters, [
      "temperature",
      "top_p",
      "top_k",
      "max_tokens",
      "stop",
      "tools",
      "tool_choice",
      "reasoning",
    ]);
    assert.equal(main!.pricing, {
      prompt: "0.000003",
      completion: "0.000015",
      image: "0.0048",
      request: "0.001",
      inputCacheRead: "0.0000003",
      inputCacheWrite: "0.00000375",
    });
    assert.not.ok("inputCacheRead" in batch!.pricing, "no cache price unless configured");
    assert.is(
      batch!.id,
      "anthropic/claude-sonnet@anthropic-eu/anthropic-eu/batch",
      "the tag joins the id when it differs from the slug",
    );
    assert.equal(
      [
        batch!.contextLength,
        batch!.maxCompletionTokens,
        batch!.maxPromptTokens,
        batch!.quantization,
        batch!.supportedParameters,
        batch!.supportsImplicitCaching,
      ],
      [100000, 64000, 90000, "bf16", ["temperature", "max_tokens"], true],
    );
    assert.equal([batch!.region, batch!.zdr, batch!.dataCollection], ["us", false, "deny"], "endpoint values override");
    const embeddings = catalog.models.get("openai/text-embedding-3-small")!;
    assert.is(embeddings.created, 1700000000);
    assert.equal(embeddings.endpoints[0]!.supportedParameters, ["dimensions", "input_type", "encoding_format"]);
    assert.equal(
      [...catalog.regionalHostnames],
      [
        ["eu.gateway.example", "europe"],
        ["us.gateway.example", "us"],
      ],
    );
  }
});

test("an empty YAML file is an empty catalog", async () => {
  const catalog = await load("", "yaml");
  assert.is(catalog.models.size, 0);
});

test("unreadable or unparsable files name the file and the format, without quoting its text", async () => {
  const missing = path.join(os.tmpdir(), "gateway-config-missing", "none.json");
  try {
    await loadCatalogFile(missing, ENV);
    assert.unreachable();
  } catch (err) {
    assert.match((err as Error).message, `GATEWAY_CONFIG ${missing}: cannot read the file (ENOENT)`);
  }
  await assertRejects(`{"providers": [{"api_key": "${SECRET}", }]}`, /not valid JSON/, "json");
  await assertRejects(`providers:\n  - api_key: ${SECRET}\n   bad: [`, /not valid YAML/, "yaml");
  const dir = makeTempDir("gateway-config");
  await fs.writeFile(path.join(dir, "gateway.json"), "[]");
  try {
    await loadCatalogFile(path.join(dir, "gateway.json"), ENV);
    assert.unreachable();
  } catch (err) {
    assert.match((err as Error).message, /: the document must be an object/);
  }
  await removeTempDir(dir);
});

test("a missing environment variable is named, never its neighbours' values", async () => {
  const message = await assertRejects(
    config({ providers: [provider({ api_key: "${NOPE_KEY}" })] }),
    /providers\[0\]\.api_key refers to the environment variable NOPE_KEY, which is not set/,
  );
  assert.not.ok(message.includes(SECRET));
  await assertRejects(
    config({ providers: [provider({ base_url: "https://${NOPE_HOST}/v1" })] }),
    /providers\[0\]\.base_url refers to the environment variable NOPE_HOST/,
  );
});

test("api_keys: a pool of keys with weights (default 1), each from the environment, labelled by position", async () => {
  const catalog = await load(
    JSON.stringify(
      config({
        providers: [
          provider({ api_key: undefined, api_keys: [{ key: "${OPENAI_KEY}", weight: 3 }, "${ANTHROPIC_KEY}"] }),
        ],
      }),
    ),
    "json",
  );
  const keys = catalog.providers.get("openai")!.keys;
  assert.equal(
    keys.map(({ secret, weight, label }) => ({ secret, weight, label })),
    [
      { secret: SECRET, weight: 3, label: "key-1" },
      { secret: ENV.ANTHROPIC_KEY, weight: 1, label: "key-2" },
    ],
  );
  assert.match(keys[0]!.fingerprint, /^[0-9a-f]{12}$/);
  assert.not.ok(SECRET.includes(keys[0]!.fingerprint));
});

test.run();
