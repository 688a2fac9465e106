import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { ProviderPreferencesSchema } from "../../../gen/gateway/v1/inference_pb.js";
import type { Catalog, CatalogEndpoint, CatalogModel } from "../../../server/engine/catalog/catalog.js";
import { planRoute, type EndpointRanking, type RouteInput } from "../../../server/engine/inference/routing.js";
import { httpErrorOf } from "../../../wire/errors.js";

/**
 * Route planning as a table, without a gateway: which endpoints a call may try and in which
 * order, for every rule that removes or reorders one (policy, provider preferences, sorts, model
 * variants, fallback models), and the error of each way to have none. The catalog is built here.
 */
const test = suite("inference: route planning");

function endpoint(
  provider: string,
  prompt: string,
  completion: string,
  extra: Partial<CatalogEndpoint> = {},
): CatalogEndpoint {
  return {
    id: `m/chat@${provider}`,
    modelId: "m/chat",
    providerSlug: provider,
    providerName: provider.toUpperCase(),
    tag: "",
    upstreamModelId: `${provider}-model`,
    contextLength: 8000,
    maxCompletionTokens: null,
    maxPromptTokens: null,
    quantization: null,
    pricing: { prompt, completion, image: "0", request: "0" },
    supportedParameters: ["temperature", "max_tokens", "tools"],
    supportsImplicitCaching: false,
    region: "global",
    zdr: false,
    dataCollection: "deny",
    ...extra,
  };
}

function model(id: string, endpoints: CatalogEndpoint[], outputModalities = ["text"]): CatalogModel {
  return {
    id,
    canonicalSlug: `${id}-2025`,
    name: id,
    description: "",
    created: 0,
    contextLength: 8000,
    inputModalities: ["text"],
    outputModalities,
    tokenizer: "Other",
    instructType: null,
    supportedVoices: null,
    defaultParameters: null,
    perRequestLimits: null,
    expirationDate: null,
    knowledgeCutoff: null,
    isModerated: false,
    endpoints: endpoints.map((e) => ({ ...e, id: `${id}@${e.providerSlug}`, modelId: id })),
  };
}

// Prices per token, prompt + completion: cheap 3, mid 5, dear 9.
const CHAT = model("m/chat", [
  endpoint("dear", "0.000004", "0.000005", { zdr: true }),
  endpoint("cheap", "0.000001", "0.000002", { dataCollection: "allow" }),
  endpoint("mid", "0.000002", "0.000003", { supportedParameters: ["temperature"] }),
]);
const BACKUP = model("m/backup", [endpoint("solo", "0.000001", "0.000001")]);
const EMBED = model("m/embed", [endpoint("cheap", "0.0000001", "0")], ["embeddings"]);

const CATALOG: Catalog = {
  providers: new Map(),
  models: new Map([CHAT, BACKUP, EMBED].map((m) => [m.id, m])),
  regionalHostnames: new Map(),
  videoModels: new Map(),
};
const EMPTY: Catalog = { ...CATALOG, models: new Map() };

type Preferences = MessageInitShape<typeof ProviderPreferencesSchema>;

interface Case {
  name: string;
  models?: string[];
  api?: RouteInput["api"];
  preferences?: Preferences;
  defaultSort?: string;
  parameters?: string[];
  /** Provider slugs that policy refuses. */
  refused?: string[];
  ranking?: Record<string, EndpointRanking>;
  catalog?: Catalog;
  /** The attempts as `model@provider`, in order; or the error's HTTP status and a part of its message. */
  expect: string[] | { status: number; message: string };
}

const measured = (
  latencyP50: number | null,
  throughputP50: number | null,
  uptime5m: number | null,
): EndpointRanking => ({ latencyP50, throughputP50, uptime5m });

const CASES: Case[] = [
  { name: "by default the cheapest first", expect: ["m/chat@cheap", "m/chat@mid", "m/chat@dear"] },
  {
    name: "the canonical slug names the model too",
    models: ["m/chat-2025"],
    expect: ["m/chat@cheap", "m/chat@mid", "m/chat@dear"],
  },
  {
    name: "provider.order first, the rest by price",
    preferences: { order: ["dear"] },
    expect: ["m/chat@dear", "m/chat@cheap", "m/chat@mid"],
  },
  {
    name: "order without fallbacks: the first listed only",
    preferences: { order: ["mid", "dear"], allowFallbacks: false },
    expect: ["m/chat@mid"],
  },
  { name: "no fallbacks: the first choice only", preferences: { allowFallbacks: false }, expect: ["m/chat@cheap"] },
  { name: "only", preferences: { only: ["mid", "dear"] }, expect: ["m/chat@mid", "m/chat@dear"] },
  { name: "ignore", preferences: { ignore: ["cheap"] }, expect: ["m/chat@mid", "m/chat@dear"] },
  {
    name: "data_collection deny drops endpoints that may keep prompts",
    preferences: { dataCollection: 2 },
    expect: ["m/chat@mid", "m/chat@dear"],
  },
  { name: "zdr keeps zero-data-retention endpoints", preferences: { zdr: true }, expect: ["m/chat@dear"] },
  {
    name: "require_parameters drops endpoints without a parameter in use",
    preferences: { requireParameters: true },
    parameters: ["tools"],
    expect: ["m/chat@cheap", "m/chat@dear"],
  },
  {
    name: "parameters alone change nothing",
    parameters: ["tools"],
    expect: ["m/chat@cheap", "m/chat@mid", "m/chat@dear"],
  },
  {
    name: "sort throughput: measured first, fastest first",
    preferences: { sort: 2 },
    ranking: { "m/chat@mid": measured(null, 90, null), "m/chat@dear": measured(null, 120, null) },
    expect: ["m/chat@dear", "m/chat@mid", "m/chat@cheap"],
  },
  {
    name: "sort latency: lowest first, unmeasured last",
    preferences: { sort: 3 },
    ranking: { "m/chat@mid": measured(300, null, null), "m/chat@dear": measured(100, null, null) },
    expect: ["m/chat@dear", "m/chat@mid", "m/chat@cheap"],
  },
  {
    name: "the workspace's default sort applies without a request sort",
    defaultSort: "latency",
    ranking: { "m/chat@dear": measured(50, null, null) },
    expect: ["m/chat@dear", "m/chat@cheap", "m/chat@mid"],
  },
  {
    name: "a request sort wins over the workspace's",
    defaultSort: "latency",
    preferences: { sort: 1 },
    ranking: { "m/chat@dear": measured(50, null, null) },
    expect: ["m/chat@cheap", "m/chat@mid", "m/chat@dear"],
  },
  {
    name: "default ranking: an endpoint failing lately goes last",
    ranking: { "m/chat@cheap": measured(null, null, 20) },
    expect: ["m/chat@mid", "m/chat@dear", "m/chat@cheap"],
  },
  {
    name: ":nitro sorts by throughput",
    models: ["m/chat:nitro"],
    ranking: { "m/chat@dear": measured(null, 200, null) },
    expect: ["m/chat@dear", "m/chat@cheap", "m/chat@mid"],
  },
  {
    name: ":floor sorts by price",
    models: ["m/chat:floor"],
    defaultSort: "latency",
    ranking: { "m/chat@dear": measured(10, null, null) },
    expect: ["m/chat@cheap", "m/chat@mid", "m/chat@dear"],
  },
  {
    name: "fallback models follow the requested one",
    models: ["m/chat", "m/backup"],
    preferences: { only: ["cheap", "solo"] },
    expect: ["m/chat@cheap", "m/backup@solo"],
  },
  {
    name: "a fallback that fails to plan is skipped",
    models: ["m/chat", "x/unknown"],
    preferences: { only: ["mid"] },
    expect: ["m/chat@mid"],
  },
  {
    name: "a requested model that fails to plan is skipped for its fallbacks",
    models: ["x/unknown", "m/backup"],
    expect: ["m/backup@solo"],
  },
  { name: "the same model twice is planned once", models: ["m/backup", "m/backup"], expect: ["m/backup@solo"] },
  { name: "policy refusals remove endpoints", refused: ["cheap", "mid"], expect: ["m/chat@dear"] },
  { name: "embeddings on an embeddings model", api: "embeddings", models: ["m/embed"], expect: ["m/embed@cheap"] },
  // Errors: the requested model's, when nothing can be planned.
  { name: "no model", models: [""], expect: { status: 400, message: "No model given" } },
  {
    name: "an unknown model",
    models: ["x/unknown"],
    expect: { status: 400, message: "x/unknown is not a valid model ID" },
  },
  {
    name: "an empty catalog says so",
    models: ["x/unknown"],
    catalog: EMPTY,
    expect: { status: 400, message: "no models are configured" },
  },
  {
    name: "chat on an embeddings model",
    models: ["m/embed"],
    expect: { status: 400, message: "does not produce text" },
  },
  {
    name: "embeddings on a chat model",
    api: "embeddings",
    expect: { status: 400, message: "does not produce embeddings" },
  },
  {
    name: "every endpoint refused by policy",
    refused: ["cheap", "mid", "dear"],
    expect: { status: 403, message: "Not allowed: refused dear" },
  },
  {
    name: "preferences leave nothing",
    preferences: { only: ["nobody"] },
    expect: { status: 404, message: "satisfy the provider preferences" },
  },
  {
    name: "the first model's error wins",
    models: ["m/embed", "x/unknown"],
    expect: { status: 400, message: "does not produce text" },
  },
];

async function plan(c: Case): Promise<string[] | { status: number; message: string }> {
  const input: RouteInput = {
    catalog: c.catalog ?? CATALOG,
    modelIds: c.models ?? ["m/chat"],
    api: c.api ?? "chat",
    preferences: c.preferences ? create(ProviderPreferencesSchema, c.preferences) : undefined,
    defaultSort: c.defaultSort ?? null,
    parameters: c.parameters ?? [],
    privateEndpoints: async () => [],
    refusal: (e) => (c.refused?.includes(e.providerSlug) ? `refused ${e.providerSlug}` : undefined),
    ranking: (ids) => new Map(ids.flatMap((id) => (c.ranking?.[id] ? [[id, c.ranking[id]!] as const] : []))),
  };
  try {
    return (await planRoute(input)).map((a) => a.endpoint.id);
  } catch (err) {
    if (!(err instanceof ConnectError)) throw err;
    const { status, message } = httpErrorOf(err);
    return { status, message };
  }
}

for (const c of CASES) {
  test(c.name, async () => {
    const got = await plan(c);
    if (Array.isArray(c.expect)) {
      assert.equal(got, c.expect);
      return;
    }
    assert.ok(!Array.isArray(got), `planned ${JSON.stringify(got)}`);
    assert.is(got.status, c.expect.status, got.message);
    assert.match(got.message, c.expect.message);
  });
}

test("private endpoints of the caller's organization are planned with the model's own", async () => {
  const own = endpoint("private", "0", "0", {
    id: "5d0c3c8e-0000-4000-8000-000000000001",
    privateEndpointId: "5d0c3c8e-0000-4000-8000-000000000001",
  });
  const input: RouteInput = {
    catalog: CATALOG,
    modelIds: ["m/backup"],
    api: "chat",
    preferences: undefined,
    defaultSort: null,
    parameters: [],
    privateEndpoints: async (modelId) => (modelId === "m/backup" ? [own] : []),
    refusal: () => undefined,
    ranking: () => new Map(),
  };
  assert.equal(
    (await planRoute(input)).map((a) => a.endpoint.id),
    [own.id, "m/backup@solo"],
    "free, so first by price",
  );
});

test.run();
