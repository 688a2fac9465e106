import { QueryTypes } from "sequelize";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { at, call } from "../../support/http.js";
import { startVideoGateway, submitVideo, videoLedger, type VideoGateway } from "../../support/videos.js";

/**
 * POST /videos refuses what the model cannot do with a 400 naming the field, before anything is
 * reserved or sent; passthrough parameters reach only the provider they are for; a provider that
 * refuses the request is the caller's error at once and leaves no job behind.
 */
const test = suite<{ env: VideoGateway }>("video request validation");

test.before(async (ctx) => {
  ctx.env = await startVideoGateway();
});
test.after(async ({ env }) => env.stop());
test.before.each(({ env }) => env.upstream.reset());

const HTTPS_IMAGE = "https://images.example/cat.png";
const frame = (frame_type: string, url = HTTPS_IMAGE, extra: Record<string, unknown> = {}) => ({
  type: "image_url",
  image_url: { url },
  frame_type,
  ...extra,
});
const base = { model: "mock/video", prompt: "a lighthouse at dusk" };

const CASES: Array<[string, Record<string, unknown>, RegExp]> = [
  ["model missing", { prompt: "x" }, /^model is required/],
  ["model unknown", { ...base, model: "mock/nope" }, /^model: mock\/nope is not a video model/],
  ["a text model", { ...base, model: "openai/gpt-4o" }, /^model: openai\/gpt-4o is not a video model/],
  ["prompt missing", { model: "mock/video" }, /^prompt is required unless frame_images are given/],
  ["prompt blank", { ...base, prompt: "   " }, /^prompt must not be empty/],
  ["prompt too long", { ...base, prompt: "x".repeat(32_001) }, /^prompt must be at most 32000 characters/],
  ["prompt of the wrong type", { ...base, prompt: 42 }, /prompt/],
  [
    "duration not offered",
    { ...base, duration: 5 },
    /^duration must be one of 4, 8, 12 \(seconds\) for model mock\/video/,
  ],
  ["duration zero", { ...base, duration: 0 }, /^duration/],
  ["duration not a number", { ...base, duration: "eight" }, /duration/],
  [
    "resolution not offered",
    { ...base, resolution: "4K" },
    /^resolution must be one of 720p, 1080p for model mock\/video/,
  ],
  [
    "resolution on a model without resolutions",
    { ...base, model: "mock/video-free", resolution: "720p" },
    /^resolution is not supported by model mock\/video-free/,
  ],
  ["aspect_ratio not offered", { ...base, aspect_ratio: "1:1" }, /^aspect_ratio must be one of 16:9, 9:16/],
  ["size not offered", { ...base, size: "1920x1080" }, /^size must be one of 1280x720, 720x1280/],
  ["size malformed", { ...base, size: "big" }, /^size/],
  [
    "size on a model without sizes",
    { ...base, model: "mock/video-free", size: "1280x720" },
    /^size is not supported by model mock\/video-free/,
  ],
  ["seed refused by the model", { ...base, seed: 42 }, /^seed is not supported by model mock\/video/],
  [
    "audio the model cannot make",
    { ...base, generate_audio: true },
    /^generate_audio is not supported by model mock\/video/,
  ],
  [
    "frame type not offered",
    { ...base, frame_images: [frame("last_frame")] },
    /^frame_images\[0\]\.frame_type last_frame is not supported by model mock\/video \(supported: first_frame\)/,
  ],
  [
    "frame type twice",
    { ...base, frame_images: [frame("first_frame"), frame("first_frame")] },
    /^frame_images\[1\]\.frame_type: first_frame is given twice/,
  ],
  ["frame type unknown", { ...base, frame_images: [frame("middle_frame")] }, /frame_images\[0\]\.frame_type/],
  [
    "frame type missing",
    { ...base, frame_images: [{ type: "image_url", image_url: { url: HTTPS_IMAGE } }] },
    /^frame_images\[0\]\.frame_type is required/,
  ],
  [
    "frame image without a URL",
    { ...base, frame_images: [{ type: "image_url", frame_type: "first_frame" }] },
    /^frame_images\[0\]\.image_url is required/,
  ],
  [
    "frame image over http",
    { ...base, frame_images: [frame("first_frame", "http://images.example/cat.png")] },
    /^frame_images\[0\]\.image_url\.url must be an https URL or a base64 data URL/,
  ],
  [
    "frame image of another type",
    { ...base, frame_images: [frame("first_frame", HTTPS_IMAGE, { type: "video_url" })] },
    /^frame_images\[0\]\.type must be image_url/,
  ],
  [
    "three frame images",
    { ...base, frame_images: [frame("first_frame"), frame("first_frame"), frame("first_frame")] },
    /^frame_images must have at most 2 items/,
  ],
  [
    "frames on a model without frames",
    { ...base, model: "mock/video-free", frame_images: [frame("first_frame")] },
    /^frame_images\[0\]\.frame_type first_frame is not supported by model mock\/video-free \(supported: none\)/,
  ],
  [
    "too many reference images",
    {
      ...base,
      input_references: [
        { type: "image_url", image_url: { url: HTTPS_IMAGE } },
        { type: "image_url", image_url: { url: HTTPS_IMAGE } },
      ],
    },
    /^input_references: model mock\/video accepts at most 1/,
  ],
  [
    "reference images on a model without them",
    { ...base, model: "mock/video-free", input_references: [{ type: "image_url", image_url: { url: HTTPS_IMAGE } }] },
    /^input_references are not supported by model mock\/video-free/,
  ],
  [
    "reference image not a URL",
    { ...base, input_references: [{ type: "image_url", image_url: { url: "cat.png" } }] },
    /^input_references\[0\]\.image_url\.url must be an https URL/,
  ],
  [
    "passthrough parameter not allowed",
    { ...base, provider: { options: { mockai: { parameters: { color: "red" } } } } },
    /^provider\.options\.mockai\.parameters\.color is not an allowed passthrough parameter of model mock\/video \(allowed: style\)/,
  ],
  [
    "passthrough options not an object",
    { ...base, provider: { options: { mockai: "noir" } } },
    /^provider\.options\.mockai must be an object/,
  ],
  [
    "passthrough value outside parameters",
    { ...base, provider: { options: { mockai: { style: "noir" } } } },
    /^provider\.options\.mockai\.style is not supported; provider-specific values go under provider\.options\.mockai\.parameters/,
  ],
  ["provider.options not an object", { ...base, provider: { options: [1] } }, /^provider\.options must be an object/],
  ["callback over http", { ...base, callback_url: "http://hooks.example/video" }, /^callback_url/],
  [
    "callback (no webhooks)",
    { ...base, callback_url: "https://hooks.example/video" },
    /^callback_url is not supported by this gateway/,
  ],
  ["previous_job_id malformed", { ...base, previous_job_id: "job-1" }, /^previous_job_id/],
];

/** Jobs and budget reservations in the database. */
async function leftovers(env: VideoGateway): Promise<{ jobs: number; reservations: number }> {
  const [counts] = await env.gw.gateway.sequelize.query<{ jobs: number; reservations: number }>(
    "SELECT (SELECT count(*)::int FROM video_jobs) AS jobs, " +
      "(SELECT count(*)::int FROM budget_reservations) AS reservations",
    { type: QueryTypes.SELECT },
  );
  return counts!;
}

test("every capability the model lacks is a 400 naming the field; nothing is sent, reserved or billed", async ({
  env,
}) => {
  const { gw, upstream } = env;
  // What the suite's other tests left, whichever ran first: these refusals add nothing to it.
  const [before, billedBefore] = [await leftovers(env), (await videoLedger(gw.gateway)).length];
  for (const [label, body, message] of CASES) {
    const res = await submitVideo(gw.url, gw.key, body);
    assert.is(res.status, 400, `${label}: ${res.text}`);
    assert.is(at(res.body, "error", "code"), 400, label);
    assert.match(String(at(res.body, "error", "message")), message, label);
  }
  assert.is(upstream.videos.calls.create, 0);
  assert.equal(await leftovers(env), before);
  assert.is((await videoLedger(gw.gateway)).length, billedBefore);
});

test("a malformed body is a 400", async ({ env }) => {
  const res = await call(env.gw.url, "POST", "/api/v1/videos", { key: env.gw.key, raw: "{not json" });
  assert.is(res.status, 400, res.text);
  const array = await call(env.gw.url, "POST", "/api/v1/videos", { key: env.gw.key, raw: "[]" });
  assert.is(array.status, 400, array.text);
});

test("what the model offers is accepted, and passthrough parameters reach only their provider", async ({ env }) => {
  const { gw, upstream } = env;
  const res = await submitVideo(gw.url, gw.key, {
    ...base,
    duration: 12,
    size: "720x1280",
    frame_images: [frame("first_frame")],
    input_references: [{ type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } }],
    provider: { options: { mockai: { parameters: { style: "noir" } }, backup: { parameters: { style: "pastel" } } } },
  });
  assert.is(res.status, 202, res.text);
  const sent = upstream.requests.find((r) => r.path === "/openai/v1/videos")?.body;
  assert.equal(sent, {
    style: "noir",
    model: "sora-mock",
    seconds: "12",
    prompt: base.prompt,
    size: "720x1280",
    input_reference: { image_url: HTTPS_IMAGE },
    input_references: [{ image_url: "data:image/png;base64,iVBORw0KGgo=" }],
  });
});

test("a provider that refuses the request: its 400 at once, and no job, reservation or ledger row stays", async ({
  env,
}) => {
  const { gw, upstream } = env;
  const before = await leftovers(env);
  // The mock needs a prompt, which the model's rules do not require with a first frame.
  const res = await submitVideo(gw.url, gw.key, { model: "mock/video", frame_images: [frame("first_frame")] });
  assert.is(res.status, 400, res.text);
  assert.match(
    String(at(res.body, "error", "message")),
    /MockAI rejected the request: mock upstream: prompt is required/,
  );
  assert.is(upstream.videos.calls.create, 1, "a refusal of the request itself is not tried elsewhere");
  assert.equal(await leftovers(env), before);
});

test.run();
