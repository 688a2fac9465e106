import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { at, call } from "../../support/http.js";
import {
  fetchBytes,
  getVideo,
  runUntil,
  startVideoGateway,
  submitted,
  submitVideo,
  videoLedger,
  type VideoGateway,
} from "../../support/videos.js";

/**
 * The video job lifecycle against the mock upstream's Videos API: submission (202 `pending`),
 * polling through `in_progress` to `completed` with the full 2.15 shape, content through the
 * unsigned URL with the key and through the signed URL without one, usage billed once, a job the
 * provider fails, other workspaces and unknown ids, continuation, and the model list.
 */
const test = suite<{ env: VideoGateway }>("video jobs");

test.before(async (ctx) => {
  ctx.env = await startVideoGateway();
});
test.after(async ({ env }) => env.stop());
test.before.each(({ env }) => env.upstream.reset());

const JOB_ID = /^gen-vid-[0-9]+-[A-Za-z0-9]{20}$/;

test("a job goes pending → in_progress → completed with the full 2.15 shape", async ({ env }) => {
  const { gw, upstream } = env;
  const res = await submitVideo(gw.url, gw.key, {
    model: "mock/video",
    prompt: "a red balloon over a harbour",
    duration: 8,
    resolution: "720p",
    aspect_ratio: "16:9",
  });
  assert.is(res.status, 202, res.text);
  const id = String(at(res.body, "id"));
  assert.match(id, JOB_ID);
  assert.is(Number(id.split("-")[2]), Math.floor(Number(id.split("-")[2])));
  assert.equal(res.body, {
    id,
    status: "pending",
    polling_url: `/api/v1/videos/${id}`,
    expires_at: null,
    unsigned_urls: [],
    urls: null,
  });
  // What the provider got: OpenAI's fields, the size that 720p at 16:9 stands for, our job id as idempotency key.
  const sent = upstream.requests.find((r) => r.path === "/openai/v1/videos");
  assert.equal(sent?.body, {
    model: "sora-mock",
    seconds: "8",
    prompt: "a red balloon over a harbour",
    size: "1280x720",
  });
  assert.is(sent?.headers["idempotency-key"], id);

  await gw.gateway.videos.runOnce();
  const running = await getVideo(gw.url, gw.key, id);
  assert.is(running.status, 200, running.text);
  assert.is(at(running.body, "status"), "in_progress");
  assert.is(at(running.body, "generation_id"), undefined);
  assert.is(at(running.body, "usage"), undefined);

  await gw.gateway.videos.runOnce();
  const done = await getVideo(gw.url, gw.key, id);
  assert.is(at(done.body, "status"), "completed", done.text);
  const body = done.body as Record<string, unknown>;
  assert.match(String(body.generation_id), /^gen-[0-9]+-[A-Za-z0-9]{20}$/);
  const expiresAt = Number(body.expires_at);
  const week = 7 * 24 * 3600;
  assert.ok(
    Math.abs(expiresAt - (Math.floor(Date.now() / 1000) + week)) < 600,
    `expires_at ${expiresAt} is about a week ahead`,
  );
  assert.equal(body.unsigned_urls, [`/api/v1/videos/${id}/content?index=0`]);
  const urls = body.urls as string[];
  assert.is(urls.length, 1);
  assert.match(
    urls[0]!,
    new RegExp(`^/api/v1/videos/${id}/content\\?index=0&expires=${expiresAt}&sig=[A-Za-z0-9_-]{43}$`),
  );
  // $0.05 per video + 8 s × $0.10.
  assert.equal(body.usage, { cost: 0.85, is_byok: false });
  assert.is(body.polling_url, `/api/v1/videos/${id}`);
  assert.is(body.error, undefined);
});

test("content: unsigned URL with the key, signed URL without one, the same bytes as the provider's", async ({
  env,
}) => {
  const { gw, upstream } = env;
  const id = await submitted(gw.url, gw.key, { model: "mock/video", prompt: "waves" });
  const done = await runUntil(gw.gateway, gw.key, id, "completed");
  const upstreamId = [...upstream.videos.jobs.keys()][0]!;
  const expected = upstream.videos.contentOf(upstreamId);

  const unsigned = String(at(done.body, "unsigned_urls", 0));
  const withKey = await fetchBytes(gw.url, unsigned, gw.key);
  assert.is(withKey.status, 200);
  assert.is(withKey.type, "video/mp4");
  assert.ok(withKey.bytes.equals(expected));
  // Served from the gateway's copy: the provider was asked for the bytes once, at completion.
  assert.is(upstream.videos.calls.content, 1);

  const withoutKey = await fetchBytes(gw.url, unsigned);
  assert.is(withoutKey.status, 401);
  assert.is(at(withoutKey.body, "error", "code"), 401);

  const signed = String(at(done.body, "urls", 0));
  const anonymous = await fetchBytes(gw.url, signed);
  assert.is(anonymous.status, 200, anonymous.bytes.toString().slice(0, 200));
  assert.ok(anonymous.bytes.equals(expected));
  assert.is(upstream.videos.calls.content, 1);
});

test("a tampered, mismatched, partial or expired signature is a 401", async ({ env }) => {
  const { gw } = env;
  const id = await submitted(gw.url, gw.key, { model: "mock/video", prompt: "tamper" });
  const done = await runUntil(gw.gateway, gw.key, id, "completed");
  const signed = new URL(String(at(done.body, "urls", 0)), gw.url);
  const sig = signed.searchParams.get("sig")!;
  const expires = Number(signed.searchParams.get("expires"));
  const variant = (changes: Record<string, string | null>) => {
    const url = new URL(signed);
    for (const [name, value] of Object.entries(changes)) {
      if (value === null) url.searchParams.delete(name);
      else url.searchParams.set(name, value);
    }
    return url.pathname + url.search;
  };
  const flipped = (sig[0] === "A" ? "B" : "A") + sig.slice(1);
  const other = await submitted(gw.url, gw.key, { model: "mock/video", prompt: "another" });
  await runUntil(gw.gateway, gw.key, other, "completed");
  const cases: Array<[string, string]> = [
    ["signature changed", variant({ sig: flipped })],
    ["signature with extra characters", variant({ sig: `${sig}AA` })],
    ["expiry moved later", variant({ expires: String(expires + 3600) })],
    ["another output index", variant({ index: "1" })],
    ["signature of another job", `/api/v1/videos/${other}/content?index=0&expires=${expires}&sig=${sig}`],
    ["expires without sig", variant({ sig: null })],
    ["sig without expires", variant({ expires: null })],
  ];
  for (const [label, url] of cases) {
    const res = await fetchBytes(gw.url, url);
    assert.is(res.status, 401, label);
    assert.is(at(res.body, "error", "code"), 401, label);
  }
  // A valid signature past its expiry: the gateway's own signature of an earlier time.
  const past = Math.floor(Date.now() / 1000) - 60;
  const { createUrlSigner } = await import("../../../server/services/videos/video-url-signing.js");
  const stale = createUrlSigner(gw.gateway.deps.secrets.masterKey).url(id, 0, past);
  const expired = await fetchBytes(gw.url, stale);
  assert.is(expired.status, 401);
  assert.match(String(at(expired.body, "error", "message")), /expired/);
});

test("a completed job is billed once in the ledger, whatever the number of polls", async ({ env }) => {
  const { gw } = env;
  const before = (await videoLedger(gw.gateway)).length;
  const id = await submitted(gw.url, gw.key, {
    model: "mock/video",
    prompt: "billing",
    duration: 4,
    resolution: "1080p",
  });
  const done = await runUntil(gw.gateway, gw.key, id, "completed");
  for (let i = 0; i < 3; i++) await gw.gateway.videos.runOnce();
  const rows = (await videoLedger(gw.gateway)).slice(before);
  assert.is(rows.length, 1);
  const row = rows[0]!;
  assert.is(row.generation_id, at(done.body, "generation_id"));
  assert.is(row.status, "success");
  assert.is(row.model_id, "mock/video");
  assert.is(row.endpoint_id, "mock/video@mockai");
  // $0.05 + 4 s × $0.25 at 1080p.
  assert.is(row.cost_usd, "1.05");
  assert.equal(at(done.body, "usage"), { cost: Number(row.cost_usd), is_byok: false });
  // The key's usage counts it (GET /key reads the spend counters).
  const key = await call(gw.url, "GET", "/api/v1/key", { key: gw.key });
  assert.ok(Number(at(key.body, "data", "usage")) >= Number(row.cost_usd), key.text);
});

test("the seconds the provider reports are billed", async ({ env }) => {
  const { gw, upstream } = env;
  upstream.videos.reportSeconds = 12;
  const id = await submitted(gw.url, gw.key, { model: "mock/video", prompt: "longer than asked", duration: 4 });
  const done = await runUntil(gw.gateway, gw.key, id, "completed");
  // $0.05 + 12 s × $0.10, not the 4 s asked for.
  assert.is(at(done.body, "usage", "cost"), 1.25);
});

test("a job the provider fails is failed with its reason, billed at no cost, without outputs", async ({ env }) => {
  const { gw, upstream } = env;
  upstream.videos.failNext = "the prompt was flagged by the moderation system";
  const id = await submitted(gw.url, gw.key, { model: "mock/video", prompt: "something flagged" });
  const failed = await runUntil(gw.gateway, gw.key, id, "failed");
  const body = failed.body as Record<string, unknown>;
  assert.match(String(body.error), /flagged by the moderation system/);
  assert.match(String(body.generation_id), /^gen-/);
  assert.equal(body.unsigned_urls, []);
  assert.is(body.urls, null);
  assert.is(body.expires_at, null);
  assert.is(body.usage, undefined);
  const rows = (await videoLedger(gw.gateway)).filter((r) => r.generation_id === body.generation_id);
  assert.is(rows.length, 1);
  assert.is(rows[0]!.status, "error");
  assert.is(Number(rows[0]!.cost_usd), 0);
  const content = await fetchBytes(gw.url, `/api/v1/videos/${id}/content`, gw.key);
  assert.is(content.status, 409);
});

test("content before completion is 409; an index past the outputs is 404", async ({ env }) => {
  const { gw } = env;
  const id = await submitted(gw.url, gw.key, { model: "mock/video", prompt: "not yet" });
  const early = await fetchBytes(gw.url, `/api/v1/videos/${id}/content?index=0`, gw.key);
  assert.is(early.status, 409);
  assert.match(String(at(early.body, "error", "message")), /pending/);
  await runUntil(gw.gateway, gw.key, id, "completed");
  const past = await fetchBytes(gw.url, `/api/v1/videos/${id}/content?index=1`, gw.key);
  assert.is(past.status, 404);
  const negative = await fetchBytes(gw.url, `/api/v1/videos/${id}/content?index=-1`, gw.key);
  assert.is(negative.status, 400);
});

test("another workspace's job and an unknown id are 404, for the job and its content", async ({ env }) => {
  const { gw } = env;
  const id = await submitted(gw.url, gw.key, { model: "mock/video", prompt: "mine" });
  await runUntil(gw.gateway, gw.key, id, "completed");
  const workspace = await call(gw.url, "POST", "/api/v1/workspaces", {
    key: gw.key,
    body: { name: "Other", slug: `other-${Date.now()}` },
  });
  assert.is(workspace.status, 201, workspace.text);
  const created = await call(gw.url, "POST", "/api/v1/keys", {
    key: gw.key,
    body: { name: "other workspace", workspace_id: at(workspace.body, "data", "id") },
  });
  assert.is(created.status, 201, created.text);
  const otherKey = String(at(created.body, "key"));
  for (const path of [`/api/v1/videos/${id}`, `/api/v1/videos/${id}/content`]) {
    const res = await call(gw.url, "GET", path, { key: otherKey });
    assert.is(res.status, 404, `${path}: ${res.text}`);
    assert.is(at(res.body, "error", "code"), 404);
  }
  for (const unknown of ["gen-vid-1700000000-AAAAAAAAAAAAAAAAAAAA", "nope", "a%20b"]) {
    const res = await getVideo(gw.url, gw.key, unknown);
    assert.is(res.status, 404, `${unknown}: ${res.text}`);
  }
  // Continuing another workspace's job: as unknown as its id.
  const continued = await submitVideo(gw.url, otherKey, { model: "mock/video", prompt: "go on", previous_job_id: id });
  assert.is(continued.status, 404, continued.text);
});

test("without a key, jobs and submissions are 401", async ({ env }) => {
  const { gw } = env;
  assert.is((await call(gw.url, "GET", "/api/v1/videos/gen-vid-1700000000-AAAAAAAAAAAAAAAAAAAA")).status, 401);
  assert.is((await call(gw.url, "POST", "/api/v1/videos", { body: { model: "mock/video", prompt: "x" } })).status, 401);
  assert.is(
    (await call(gw.url, "GET", "/api/v1/videos/gen-vid-1700000000-AAAAAAAAAAAAAAAAAAAA", { key: "sk-not-a-key" }))
      .status,
    401,
  );
});

test("previous_job_id continues a completed job of the workspace on the provider that made it", async ({ env }) => {
  const { gw, upstream } = env;
  const first = await submitted(gw.url, gw.key, { model: "mock/video", prompt: "a cat walks in" });
  const pending = await submitVideo(gw.url, gw.key, {
    model: "mock/video",
    prompt: "too early",
    previous_job_id: first,
  });
  assert.is(pending.status, 400, pending.text);
  assert.match(String(at(pending.body, "error", "message")), /previous_job_id .* is pending; only a completed job/);
  await runUntil(gw.gateway, gw.key, first, "completed");
  const firstUpstream = [...upstream.videos.jobs.keys()][0]!;

  const second = await submitVideo(gw.url, gw.key, {
    model: "mock/video",
    prompt: "the cat sits down",
    previous_job_id: first,
    duration: 4,
  });
  assert.is(second.status, 202, second.text);
  const extension = upstream.requests.find((r) => r.path === "/openai/v1/videos/extensions");
  assert.equal(extension?.body, { video: { id: firstUpstream }, seconds: "4", prompt: "the cat sits down" });
  const done = await runUntil(gw.gateway, gw.key, String(at(second.body, "id")), "completed");
  assert.is(at(done.body, "usage", "cost"), 0.45);

  for (const [body, pattern] of [
    [{ model: "mock/video-free", prompt: "x", previous_job_id: first }, /job of model mock\/video/],
    [
      { model: "mock/video", prompt: "x", previous_job_id: first, resolution: "720p" },
      /^resolution cannot be combined with previous_job_id/,
    ],
    [{ model: "mock/video", previous_job_id: first }, /^prompt is required to continue a job/],
    [{ model: "mock/video", prompt: "x", previous_job_id: "job_1" }, /^previous_job_id/],
  ] as const) {
    const res = await submitVideo(gw.url, gw.key, body);
    assert.is(res.status, 400, res.text);
    assert.match(String(at(res.body, "error", "message")), pattern);
  }
  const unknown = await submitVideo(gw.url, gw.key, {
    model: "mock/video",
    prompt: "x",
    previous_job_id: "gen-vid-1700000000-AAAAAAAAAAAAAAAAAAAA",
  });
  assert.is(unknown.status, 404, unknown.text);
});

test("GET /videos/models lists the catalog's video models, without a key", async ({ env }) => {
  const res = await call(env.gw.url, "GET", "/api/v1/videos/models");
  assert.is(res.status, 200, res.text);
  const models = at(res.body, "data") as Record<string, unknown>[];
  assert.equal(
    models.map((m) => m.id),
    ["mock/video", "mock/video-free", "mock/video-byok"],
  );
  assert.equal(models[0], {
    id: "mock/video",
    canonical_slug: "mock/video",
    name: "Mock: Video",
    description: "A video model of the mock upstream",
    created: 1_700_000_000,
    generate_audio: false,
    seed: false,
    pricing_skus: { "per-video": "0.05", "per-video-second": "0.10", "per-video-second-1080p": "0.25" },
    supported_aspect_ratios: ["16:9", "9:16"],
    supported_durations: [4, 8, 12],
    supported_frame_images: ["first_frame"],
    supported_resolutions: ["720p", "1080p"],
    supported_sizes: ["1280x720", "720x1280"],
    allowed_passthrough_parameters: ["style"],
  });
  const free = models[1]!;
  assert.is(free.created, Math.floor(Date.parse("2024-05-13T00:00:00Z") / 1000));
  assert.is(free.seed, null);
  assert.is(free.supported_sizes, null);
  assert.equal(free.pricing_skus, {});
  // With a key it is the same list.
  const keyed = await call(env.gw.url, "GET", "/api/v1/videos/models", { key: env.gw.key });
  assert.equal(keyed.body, res.body);
});

test.run();
