import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { assertRejects, config, type Json, load, model, provider } from "./catalog-config-fixture.js";

/** Every rule of GATEWAY_CONFIG refuses a document with a message naming the JSON path and the rule. */
const test = suite("catalog config: refusals");

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
