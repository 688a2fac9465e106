import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { loadCatalogFile } from "../../../server/engine/catalog/catalog-file.js";
import { writeCatalogFile } from "../../support/catalog-file.js";
import { makeTempDir, removeTempDir } from "../../support/temp-dirs.js";
import { poolKey } from "../../../server/engine/key-pools/pool-key.js";

const test = suite("catalog config");

type Json = Record<string, unknown>;

const SECRET = "sk-live-7d1e2f3a4b5c6d7e8f9a";
const ENV = { OPENAI_KEY: SECRET, ANTHROPIC_KEY: "sk-ant-0f9e8d7c6b5a", EU_HOST: "eu.upstream.example" };

function provider(overrides: Json = {}): Json {
  return {
    slug: "openai",
    kind: "openai",
    base_url: "https://api.openai.com/v1",
    api_key: "${OPENAI_KEY}",
    ...overrides,
  };
}

function model(overrides: Json = {}, endpoint: Json = {}): Json {
  return {
    id: "openai/gpt-4o",
    name: "GPT-4o",
    context_length: 128000,
    endpoints: [
      {
        provider: "openai",
        upstream_model_id: "gpt-4o",
        pricing: { prompt: "0.0000025", completion: "0.00001" },
        ...endpoint,
      },
    ],
    ...overrides,
  };
}

function config(overrides: Json = {}): Json {
  return { providers: [provider()], models: [model()], ...overrides };
}

async function load(document: Json | string, extension?: string, env: Record<string, string> = ENV) {
  return loadCatalogFile(await writeCatalogFile(document, extension), env);
}

/** Loading fails with one message naming the file, the path and the rule; no secret in it. */
async function assertRejects(
  document: Json | string,
  pattern: RegExp,
  extension?: string,
  env: Record<string, string> = ENV,
): Promise<string> {
  const file = await writeCatalogFile(document, extension);
  try {
    await loadCatalogFile(file, env);
  } catch (err) {
    assert.instance(err, Error);
    const message = (err as Error).message;
    assert.ok(message.startsWith(`GATEWAY_CONFIG ${file}: `), message);
    assert.match(message, pattern);
    assert.not.ok(message.includes(SECRET), "no secret value in the message");
    return message;
  }
  assert.unreachable(`expected ${pattern} to be refused`);
  return "";
}

test("no file: an empty catalog", async () => {
  const catalog = await loadCatalogFile(undefined, ENV);
  assert.is(catalog.providers.size, 0);
  assert.is(catalog.models.size, 0);
  assert.is(catalog.regionalHosts.size, 0);
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
        pricing: { prompt: "0.000003", completion: "0.000015", image: "0.0048", request: "0.001", input_cache_read: "0.0000003", input_cache_write: "0.00000375" }
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
      [...catalog.regionalHosts],
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

const BAD: Array<[string, Json, RegExp]> = [
  [
    "unknown root key",
    config({ routes: [] }),
    /^.*: routes is not a known field \(known: providers, models, regional_hosts, video_models\)$/,
  ],
  ["providers not a list", config({ providers: {} }), /: providers must be a list$/],
  [
    "provider slug",
    config({ providers: [provider({ slug: "Open AI" })] }),
    /providers\[0\]\.slug must be a slug of lowercase letters/,
  ],
  ["provider slug missing", config({ providers: [provider({ slug: undefined })] }), /providers\[0\]\.slug is required/],
  [
    "duplicate provider",
    config({ providers: [provider(), provider()] }),
    /providers\[1\]\.slug 'openai' is declared twice/,
  ],
  [
    "provider kind",
    config({ providers: [provider({ kind: "gemini" })] }),
    /providers\[0\]\.kind must be one of openai, anthropic, .*got "gemini"/,
  ],
  [
    "base_url scheme",
    config({ providers: [provider({ base_url: "ftp://x" })] }),
    /providers\[0\]\.base_url must be an http:\/\/ or https:\/\/ URL/,
  ],
  [
    "base_url credentials",
    config({ providers: [provider({ base_url: "https://u:p@x/v1" })] }),
    /providers\[0\]\.base_url must not contain user credentials/,
  ],
  [
    "base_url query",
    config({ providers: [provider({ base_url: "https://x/v1?a=1" })] }),
    /providers\[0\]\.base_url must not have a query/,
  ],
  ["api_key missing", config({ providers: [provider({ api_key: undefined })] }), /providers\[0\]\.api_key is required/],
  ["api_key type", config({ providers: [provider({ api_key: 5 })] }), /providers\[0\]\.api_key is required: a string/],
  [
    "api_key and api_keys",
    config({ providers: [provider({ api_keys: ["${OPENAI_KEY}"] })] }),
    /providers\[0\]\.api_keys cannot be given with api_key/,
  ],
  [
    "api_keys empty",
    config({ providers: [provider({ api_key: undefined, api_keys: [] })] }),
    /providers\[0\]\.api_keys must list at least one item/,
  ],
  [
    "api_keys entry",
    config({ providers: [provider({ api_key: undefined, api_keys: [{ key: "" }] })] }),
    /providers\[0\]\.api_keys\[0\]\.key is required: a non-empty string/,
  ],
  [
    "api_keys weight",
    config({ providers: [provider({ api_key: undefined, api_keys: [{ key: "a", weight: 0 }] })] }),
    /providers\[0\]\.api_keys\[0\]\.weight must be an integer from 1 to 1000/,
  ],
  [
    "api_keys twice",
    config({
      providers: [provider({ api_key: undefined, api_keys: ["${OPENAI_KEY}", { key: "${OPENAI_KEY}", weight: 2 }] })],
    }),
    /providers\[0\]\.api_keys\[1\] is the same key as an earlier entry/,
  ],
  [
    "api_keys unknown field",
    config({ providers: [provider({ api_key: undefined, api_keys: [{ key: "a", wieght: 2 }] })] }),
    /providers\[0\]\.api_keys\[0\]\.wieght is not a known field/,
  ],
  [
    "api_version elsewhere",
    config({ providers: [provider({ api_version: "v1" })] }),
    /providers\[0\]\.api_version applies only to providers of kind azure/,
  ],
  [
    "aws elsewhere",
    config({ providers: [provider({ aws: { region: "us-east-1" } })] }),
    /providers\[0\]\.aws applies only to providers of kind bedrock/,
  ],
  [
    "timeout",
    config({ providers: [provider({ timeout_ms: 0 })] }),
    /providers\[0\]\.timeout_ms must be an integer from 1 to 3600000/,
  ],
  [
    "provider region",
    config({ providers: [provider({ region: "asia" })] }),
    /providers\[0\]\.region must be one of global, europe, us/,
  ],
  ["provider zdr", config({ providers: [provider({ zdr: "yes" })] }), /providers\[0\]\.zdr must be true or false/],
  [
    "provider data_collection",
    config({ providers: [provider({ data_collection: "maybe" })] }),
    /providers\[0\]\.data_collection must be one of allow, deny/,
  ],
  [
    "unknown provider key",
    config({ providers: [provider({ apikey: "x" })] }),
    /providers\[0\]\.apikey is not a known field/,
  ],
  ["model id", config({ models: [model({ id: "GPT-4o" })] }), /models\[0\]\.id must be 'author\/slug'/],
  ["model id missing", config({ models: [model({ id: undefined })] }), /models\[0\]\.id is required/],
  [
    "duplicate model",
    config({ models: [model(), model()] }),
    /models\[1\]\.id 'openai\/gpt-4o' is already used by models\[0\]\.id/,
  ],
  [
    "canonical slug taken",
    config({ models: [model(), model({ id: "openai/gpt-4o-mini", canonical_slug: "openai/gpt-4o" })] }),
    /models\[1\]\.canonical_slug 'openai\/gpt-4o' is already used/,
  ],
  ["model name", config({ models: [model({ name: "" })] }), /models\[0\]\.name must be a non-empty string/],
  [
    "context_length missing",
    config({ models: [model({ context_length: undefined })] }),
    /models\[0\]\.context_length is required: an integer from 1/,
  ],
  [
    "context_length type",
    config({ models: [model({ context_length: "big" })] }),
    /models\[0\]\.context_length must be an integer/,
  ],
  ["created", config({ models: [model({ created: "yesterday" })] }), /models\[0\]\.created must be an ISO 8601 date/],
  [
    "created negative",
    config({ models: [model({ created: -5 })] }),
    /models\[0\]\.created must be an ISO 8601 date .* or Unix seconds/,
  ],
  [
    "input modality",
    config({ models: [model({ input_modalities: ["smell"] })] }),
    /models\[0\]\.input_modalities\[0\] must be one of text, image, file, audio, video/,
  ],
  [
    "output modalities empty",
    config({ models: [model({ output_modalities: [] })] }),
    /models\[0\]\.output_modalities must list at least one item/,
  ],
  [
    "expiration date",
    config({ models: [model({ expiration_date: "2025-02-30" })] }),
    /models\[0\]\.expiration_date must be a real calendar date/,
  ],
  [
    "default_parameters",
    config({ models: [model({ default_parameters: [1] })] }),
    /models\[0\]\.default_parameters must be an object or null/,
  ],
  ["is_moderated", config({ models: [model({ is_moderated: 1 })] }), /models\[0\]\.is_moderated must be true or false/],
  [
    "no endpoints",
    config({ models: [model({ endpoints: [] })] }),
    /models\[0\]\.endpoints must list at least one item/,
  ],
  ["endpoints missing", config({ models: [model({ endpoints: undefined })] }), /models\[0\]\.endpoints must be a list/],
  [
    "undeclared provider",
    config({ models: [model({}, { provider: "groq" })] }),
    /models\[0\]\.endpoints\[0\]\.provider 'groq' is not a declared provider \(declared: openai\)/,
  ],
  [
    "upstream_model_id",
    config({ models: [model({}, { upstream_model_id: undefined })] }),
    /models\[0\]\.endpoints\[0\]\.upstream_model_id is required/,
  ],
  [
    "pricing missing",
    config({ models: [model({}, { pricing: undefined })] }),
    /models\[0\]\.endpoints\[0\]\.pricing is required/,
  ],
  [
    "prompt missing",
    config({ models: [model({}, { pricing: { completion: "0" } })] }),
    /models\[0\]\.endpoints\[0\]\.pricing\.prompt is required/,
  ],
  [
    "prompt negative",
    config({ models: [model({}, { pricing: { prompt: "-1", completion: "0" } })] }),
    /models\[0\]\.endpoints\[0\]\.pricing\.prompt must be a non-negative decimal string/,
  ],
  [
    "prompt number",
    config({ models: [model({}, { pricing: { prompt: 0.000001, completion: "0" } })] }),
    /models\[0\]\.endpoints\[0\]\.pricing\.prompt .* write it as a quoted string/,
  ],
  [
    "completion precision",
    config({ models: [model({}, { pricing: { prompt: "0", completion: "0.0000000000001" } })] }),
    /pricing\.completion must be .* at most 12 decimal places/,
  ],
  [
    "image price",
    config({ models: [model({}, { pricing: { prompt: "0", completion: "0", image: "abc" } })] }),
    /pricing\.image must be a non-negative decimal/,
  ],
  [
    "cache read price",
    config({ models: [model({}, { pricing: { prompt: "0", completion: "0", input_cache_read: 0.0000003 } })] }),
    /pricing\.input_cache_read .* write it as a quoted string/,
  ],
  [
    "cache write price",
    config({ models: [model({}, { pricing: { prompt: "0", completion: "0", input_cache_write: "-1" } })] }),
    /pricing\.input_cache_write must be a non-negative decimal/,
  ],
  [
    "unknown pricing key",
    config({ models: [model({}, { pricing: { prompt: "0", completion: "0", cache: "0" } })] }),
    /pricing\.cache is not a known field/,
  ],
  [
    "tag",
    config({ models: [model({}, { tag: "Fast Lane" })] }),
    /models\[0\]\.endpoints\[0\]\.tag must be lowercase letters/,
  ],
  [
    "endpoint region",
    config({ models: [model({}, { region: "mars" })] }),
    /models\[0\]\.endpoints\[0\]\.region must be one of global, europe, us/,
  ],
  [
    "supported_parameters",
    config({ models: [model({}, { supported_parameters: "all" })] }),
    /models\[0\]\.endpoints\[0\]\.supported_parameters must be a list/,
  ],
  [
    "max tokens",
    config({ models: [model({}, { max_completion_tokens: 0 })] }),
    /models\[0\]\.endpoints\[0\]\.max_completion_tokens must be an integer from 1/,
  ],
  [
    "regional hosts type",
    config({ regional_hosts: ["eu.example"] }),
    /regional_hosts must be an object mapping host names to regions/,
  ],
  [
    "regional host name",
    config({ regional_hosts: { "eu.example:8080": "europe" } }),
    /regional_hosts\.eu\.example:8080 must be keyed by a host name without scheme or port/,
  ],
  [
    "regional host region",
    config({ regional_hosts: { "eu.example": "eu" } }),
    /regional_hosts\.eu\.example must be one of global, europe, us/,
  ],
];

test("each validation error names the JSON path and the rule", async () => {
  for (const [, document, pattern] of BAD) await assertRejects(document, pattern);
});

test("two endpoints of one provider need distinct tags", async () => {
  const endpoint = { provider: "openai", upstream_model_id: "gpt-4o", pricing: { prompt: "0", completion: "0" } };
  await assertRejects(
    config({ models: [model({ endpoints: [endpoint, endpoint] })] }),
    /models\[0\]\.endpoints\[1\] duplicates endpoint 'openai\/gpt-4o@openai' of models\[0\]\.endpoints\[0\]; give one of them a distinct tag/,
  );
  const catalog = await load(
    config({ models: [model({ endpoints: [endpoint, { ...endpoint, tag: "openai/flex" }] })] }),
  );
  assert.equal(
    catalog.models.get("openai/gpt-4o")!.endpoints.map((e) => e.id),
    ["openai/gpt-4o@openai", "openai/gpt-4o@openai/openai/flex"],
  );
});

test.run();
