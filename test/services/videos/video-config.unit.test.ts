import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { catalogFromDocument } from "../../../server/engine/catalog/catalog-document.js";
import { videoCost } from "../../../server/services/videos/video-cost.js";

/**
 * The `video_models` section of GATEWAY_CONFIG: defaults, the endpoint policy fields inherited
 * from providers, and one error naming the path and the rule for each mistake; plus the cost
 * formula of pricing_skus.
 */
const test = suite("video model config");

type Json = Record<string, unknown>;

const PROVIDERS = [
  { slug: "openai", kind: "openai", base_url: "https://api.openai.com/v1", api_key: "", region: "us", zdr: true },
  { slug: "anthropic", kind: "anthropic", base_url: "https://api.anthropic.com/v1", api_key: "" },
];

function video(overrides: Json = {}): Json {
  return {
    id: "openai/sora-2",
    name: "Sora 2",
    created: "2025-10-06",
    supported_durations: [4, 8, 12],
    endpoints: [{ provider: "openai", upstream_model_id: "sora-2" }],
    ...overrides,
  };
}

function load(videoModels: unknown[], extra: Json = {}) {
  return catalogFromDocument({ providers: PROVIDERS, video_models: videoModels, ...extra }, "gateway.json", {});
}

test("defaults: a minimal video model", () => {
  const catalog = load([video()]);
  const model = catalog.videoModels.get("openai/sora-2")!;
  assert.is(model.canonicalSlug, "openai/sora-2");
  assert.is(model.created, Math.floor(Date.parse("2025-10-06T00:00:00Z") / 1000));
  assert.is(model.defaultDuration, 4);
  assert.equal(model.supportedResolutions, []);
  assert.is(model.supportedSizes, null);
  assert.is(model.seed, null);
  assert.is(model.generateAudio, false);
  assert.is(model.maxInputReferences, 0);
  assert.is(model.pricingSkus.size, 0);
  const endpoint = model.endpoints[0]!;
  assert.is(endpoint.id, "openai/sora-2@openai");
  assert.is(endpoint.region, "us", "inherited from the provider");
  assert.is(endpoint.zdr, true);
  assert.is(endpoint.pricing.request, "0", "free: no SKU has a price");
  assert.is(catalog.models.size, 0, "video models are not text models");
});

test("the highest SKU price marks the endpoint as paid for policies", () => {
  const model = load([
    video({
      supported_resolutions: ["720p"],
      pricing_skus: { "per-video-second": "0.10", "per-video-second-720p": "0.3", "per-video": "0.05" },
    }),
  ]).videoModels.get("openai/sora-2")!;
  assert.is(model.endpoints[0]!.pricing.request, "0.3");
});

test("cost: per video, plus seconds at the resolution's price or the default per-second price", () => {
  const model = load([
    video({
      supported_resolutions: ["720p", "1080p"],
      pricing_skus: { "per-video": "0.05", "per-video-second": "0.1", "per-video-second-1080p": "0.25" },
    }),
  ]).videoModels.get("openai/sora-2")!;
  assert.is(videoCost(model, 8, "720p"), "0.85");
  assert.is(videoCost(model, 8, "1080p"), "2.05");
  assert.is(videoCost(model, 4, null), "0.45");
  const free = load([video()]).videoModels.get("openai/sora-2")!;
  assert.is(videoCost(free, 12, null), "0");
});

const MISTAKES: Array<[string, unknown[], RegExp, Json?]> = [
  ["unknown field", [video({ fps: 24 })], /video_models\[0\]\.fps is not a known field/],
  [
    "no durations",
    [video({ supported_durations: [] })],
    /video_models\[0\]\.supported_durations must list at least one item/,
  ],
  [
    "a duration of 0",
    [video({ supported_durations: [0] })],
    /video_models\[0\]\.supported_durations\[0\] must be an integer from 1 to 3600/,
  ],
  [
    "default duration not offered",
    [video({ default_duration: 5 })],
    /video_models\[0\]\.default_duration must be one of supported_durations \(4, 8, 12\)/,
  ],
  ["created missing", [video({ created: undefined })], /video_models\[0\]\.created is required/],
  [
    "resolution malformed",
    [video({ supported_resolutions: ["HD"] })],
    /video_models\[0\]\.supported_resolutions\[0\] must be a resolution such as 720p/,
  ],
  [
    "aspect ratio malformed",
    [video({ supported_aspect_ratios: ["wide"] })],
    /supported_aspect_ratios\[0\] must be an aspect ratio/,
  ],
  ["size malformed", [video({ supported_sizes: ["1280*720"] })], /supported_sizes\[0\] must be a size WIDTHxHEIGHT/],
  [
    "frame type unknown",
    [video({ supported_frame_images: ["middle_frame"] })],
    /supported_frame_images\[0\] must be one of first_frame, last_frame/,
  ],
  [
    "SKU unknown",
    [video({ pricing_skus: { "per-token": "0.1" } })],
    /video_models\[0\]\.pricing_skus\.per-token is not a SKU the gateway bills by \(known: per-video, per-video-second\)/,
  ],
  [
    "SKU for a resolution not offered",
    [video({ pricing_skus: { "per-video-second-4k": "1" } })],
    /pricing_skus\.per-video-second-4k is not a SKU/,
  ],
  [
    "price as a number",
    [video({ pricing_skus: { "per-video-second": 0.1 } })],
    /pricing_skus\.per-video-second must be a non-negative decimal string/,
  ],
  ["no endpoints", [video({ endpoints: [] })], /video_models\[0\]\.endpoints must list at least one item/],
  [
    "undeclared provider",
    [video({ endpoints: [{ provider: "nope", upstream_model_id: "x" }] })],
    /video_models\[0\]\.endpoints\[0\]\.provider 'nope' is not a declared provider/,
  ],
  [
    "provider without a video API",
    [video({ endpoints: [{ provider: "anthropic", upstream_model_id: "x" }] })],
    /endpoints\[0\]\.provider 'anthropic' is of kind anthropic, which has no video API/,
  ],
  [
    "same endpoint twice",
    [
      video({
        endpoints: [
          { provider: "openai", upstream_model_id: "a" },
          { provider: "openai", upstream_model_id: "b" },
        ],
      }),
    ],
    /endpoints\[1\] duplicates endpoint 'openai\/sora-2@openai'/,
  ],
  ["same id twice", [video(), video()], /video_models\[1\]\.id 'openai\/sora-2' is already used/],
  [
    "the id of a text model",
    [video({ id: "openai/gpt-4o" })],
    /video_models\[0\]\.id 'openai\/gpt-4o' is already used/,
    {
      models: [
        {
          id: "openai/gpt-4o",
          name: "GPT-4o",
          context_length: 1000,
          endpoints: [{ provider: "openai", upstream_model_id: "gpt-4o", pricing: { prompt: "0", completion: "0" } }],
        },
      ],
    },
  ],
  [
    "passthrough name malformed",
    [video({ allowed_passthrough_parameters: ["a-b"] })],
    /allowed_passthrough_parameters\[0\] must be a parameter name/,
  ],
];

test("each mistake is one error naming the path and the rule", () => {
  for (const [label, models, pattern, extra] of MISTAKES) {
    assert.throws(
      () => load(models, extra),
      (err: Error) => err.message.startsWith("GATEWAY_CONFIG gateway.json: ") && pattern.test(err.message),
      label,
    );
  }
});

test.run();
