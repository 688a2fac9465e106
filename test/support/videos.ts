import { randomBytes } from "node:crypto";
import { QueryTypes } from "sequelize";
import { startGateway, type Gateway } from "../../server/app/app.js";
import { loadConfig } from "../../server/platform/config.js";
import { initModels } from "../../server/platform/db/models.js";
import { createLogger } from "../../server/platform/logger.js";
import { startMockUpstream, type MockUpstream } from "../upstream/mock-upstream.js";
import { writeCatalogFile } from "./catalog-file.js";
import { startTestGateway, type TestGateway } from "./gateway.js";
import { makeTempDir, removeTempDir } from "./temp-dirs.js";
import { at, call, type Reply } from "./http.js";

/**
 * A test gateway with video models on the mock upstream's Videos API (mock-videos.ts):
 * - `mock/video` on `mockai` (upstream `sora-mock`, region us) then `backup` (`sora-backup`, ZDR):
 *   4/8/12 s, 720p/1080p, 16:9 and 9:16, sizes 1280x720 and 720x1280, a first frame, one
 *   reference image, passthrough `style`, no seed, no audio; $0.05 per video + $0.10 per second
 *   ($0.25 per second at 1080p);
 * - `mock/video-free` (no prices) on `mockai` (`free-video`);
 * - `mock/video-byok` on provider slug `openai` (`byok-video`), whose configured key the mock
 *   refuses: it only works with a workspace's own key.
 * The poller's loop is off (GATEWAY_VIDEO_POLL_MS=0) and backoffs are 0 ms: tests advance jobs
 * with `runOnce`, so nothing depends on time. Stored outputs go to a fresh directory.
 */
export interface VideoGateway {
  gw: TestGateway;
  upstream: MockUpstream;
  /** What another instance on the same database needs (catalog, master key, files directory). */
  env: Record<string, string>;
  stop(): Promise<void>;
}

export async function startVideoGateway(extra: Record<string, string> = {}): Promise<VideoGateway> {
  const upstream = await startMockUpstream();
  const providers = [
    {
      slug: "mockai",
      name: "MockAI",
      kind: "openai",
      base_url: upstream.openaiBaseUrl,
      api_key: upstream.apiKey,
      region: "us",
      timeout_ms: 2000,
    },
    {
      slug: "backup",
      name: "Backup",
      kind: "openai",
      base_url: upstream.openaiBaseUrl,
      api_key: upstream.apiKey,
      zdr: true,
      timeout_ms: 2000,
    },
    {
      slug: "openai",
      name: "OpenAI",
      kind: "openai",
      base_url: upstream.openaiBaseUrl,
      api_key: "not-the-mock-key",
      timeout_ms: 2000,
    },
  ];
  const video_models = [
    {
      id: "mock/video",
      name: "Mock: Video",
      description: "A video model of the mock upstream",
      created: 1_700_000_000,
      supported_durations: [4, 8, 12],
      supported_resolutions: ["720p", "1080p"],
      supported_aspect_ratios: ["16:9", "9:16"],
      supported_sizes: ["1280x720", "720x1280"],
      supported_frame_images: ["first_frame"],
      max_input_references: 1,
      seed: false,
      allowed_passthrough_parameters: ["style"],
      pricing_skus: { "per-video": "0.05", "per-video-second": "0.10", "per-video-second-1080p": "0.25" },
      endpoints: [
        { provider: "mockai", upstream_model_id: "sora-mock" },
        { provider: "backup", upstream_model_id: "sora-backup" },
      ],
    },
    {
      id: "mock/video-free",
      name: "Mock: Free video",
      created: "2024-05-13",
      supported_durations: [4],
      endpoints: [{ provider: "mockai", upstream_model_id: "free-video" }],
    },
    {
      id: "mock/video-byok",
      name: "Mock: BYOK video",
      created: 1_700_000_000,
      supported_durations: [4],
      pricing_skus: { "per-video-second": "0.10" },
      endpoints: [{ provider: "openai", upstream_model_id: "byok-video" }],
    },
  ];
  const env = {
    GATEWAY_CONFIG: await writeCatalogFile({ providers, video_models }),
    GATEWAY_MASTER_KEY: randomBytes(32).toString("hex"),
    GATEWAY_FILES_DIR: makeTempDir("gateway-videos"),
    GATEWAY_VIDEO_POLL_MS: "0",
    GATEWAY_VIDEO_RETRY_BASE_MS: "0",
  };
  const gw = await startTestGateway({ ...env, ...extra });
  return {
    gw,
    upstream,
    env,
    async stop() {
      await gw.stop();
      await upstream.close();
      await removeTempDir(env.GATEWAY_FILES_DIR);
    },
  };
}

/**
 * Another gateway instance in this process, on the same database, catalog, master key and files
 * directory, so a test can drive two pollers step by step. Sequelize models are global to the
 * process and bound by the instance started last, so stopping this one binds them back to the
 * test's gateway (both talk to the same database meanwhile).
 */
export async function startInstance(vg: VideoGateway, extra: Record<string, string> = {}): Promise<Gateway> {
  const config = loadConfig({
    HOST: "127.0.0.1",
    PORT: "0",
    GRPC_PORT: "0",
    DATABASE_URL: vg.gw.databaseUrl,
    GATEWAY_BOOTSTRAP_KEY: vg.gw.key,
    GATEWAY_OPERATOR_TOKEN: vg.gw.operatorToken,
    GATEWAY_SHUTDOWN_GRACE_MS: "2000",
    ...vg.env,
    ...extra,
  });
  const instance = await startGateway(config, createLogger(process.env.TEST_LOG_LEVEL ?? "silent"));
  return {
    ...instance,
    async stop() {
      await instance.stop();
      initModels(vg.gw.gateway.sequelize);
    },
  };
}

export function submitVideo(base: string, key: string, body: Record<string, unknown>): Promise<Reply> {
  return call(base, "POST", "/api/v1/videos", { key, body });
}

export function getVideo(base: string, key: string, id: string): Promise<Reply> {
  return call(base, "GET", `/api/v1/videos/${id}`, { key });
}

/** A submitted job's id; fails the test with the answer when the submission was refused. */
export async function submitted(base: string, key: string, body: Record<string, unknown>): Promise<string> {
  const res = await submitVideo(base, key, body);
  if (res.status !== 202) throw new Error(`submission refused: ${res.status} ${res.text}`);
  return String(at(res.body, "id"));
}

/** Guards a job that never gets there, so a broken poller fails the test instead of hanging it. */
const MAX_STEPS = 20;

/** Advances jobs with the poller until the job has `status`; returns the job as GET shows it. */
export async function runUntil(gateway: Gateway, key: string, id: string, status: string): Promise<Reply> {
  for (let step = 0; step < MAX_STEPS; step++) {
    const res = await getVideo(gateway.httpUrl, key, id);
    if (at(res.body, "status") === status) return res;
    await gateway.videos.runOnce();
  }
  throw new Error(`video job ${id} did not reach ${status}`);
}

export interface VideoLedgerRow {
  generation_id: string;
  api: string;
  status: string;
  http_status: number;
  model_id: string;
  endpoint_id: string | null;
  cost_usd: string;
  is_byok: boolean;
}

/** The ledger rows that bill video jobs, oldest first. */
export function videoLedger(gateway: Gateway): Promise<VideoLedgerRow[]> {
  return gateway.sequelize.query<VideoLedgerRow>(
    "SELECT generation_id, api, status, http_status, model_id, endpoint_id, cost_usd::text AS cost_usd, is_byok " +
      "FROM usage_ledger WHERE api = 'video' ORDER BY created_at, id",
    { type: QueryTypes.SELECT },
  );
}

export async function sqlOn(gateway: Gateway, text: string, bind: Record<string, unknown> = {}): Promise<void> {
  await gateway.sequelize.query(text, { bind });
}

/** A path of the gateway (a content URL) fetched as bytes. */
export async function fetchBytes(
  base: string,
  pathAndQuery: string,
  key?: string,
): Promise<{ status: number; type: string | null; bytes: Buffer; body: unknown }> {
  const res = await fetch(base + pathAndQuery, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  const bytes = Buffer.from(await res.arrayBuffer());
  let body: unknown;
  try {
    body = JSON.parse(bytes.toString("utf8"));
  } catch {
    body = undefined;
  }
  return { status: res.status, type: res.headers.get("content-type"), bytes, body };
}
