import { readFileSync, writeFileSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { request } from "undici";
import { newKeySecret } from "../server/platform/secrets/key-secret.js";
import { startEmbeddedPostgres } from "../server/platform/db/embedded-postgres.js";
import { createLogger } from "../server/platform/logger.js";
import { startGatewayProcess, type GatewayProcess } from "../test/support/gateway-process.js";
import { wav } from "../test/support/file-samples.js";
import { streamUpload, type StreamOptions } from "../test/support/file-uploads.js";
import { startMockS3, type MockS3 } from "../test/upstream/mock-s3.js";

/**
 * `npm run bench -- upload`: 100 MB (104857600 bytes, the limit) uploaded through POST /api/v1/files
 * into a gateway in its own process, streamed by the client with backpressure, and downloaded again.
 * For each phase: the gateway's peak RSS increase over its resident size just before (the kernel's
 * peak counter is reset first, via /proc/<pid>/clear_refs) and the throughput. Phases: a binary
 * file (type decided from its first bytes) into the local directory, first after start and again;
 * its download; a CSV text file (every byte checked: UTF-8, JSON and CSV shape); the binary file
 * into an S3 bucket (our mock S3 server, in the benchmark's process), first after start, again, and
 * into a slow bucket (every part answered 250 ms late), where backpressure must hold the memory.
 * Target: a peak RSS increase under 64 MB.
 */
const SIZE = 104_857_600;
const CSV_ROW = Buffer.from('2026-11-21T10:00:00Z,gateway,upload,12345.678,"quoted, text"\n');
const SLOW_PART_MS = 250;

interface Result {
  phase: string;
  seconds: number;
  peakIncreaseMiB: number;
  status: number;
  detail: string;
}

export async function runUploadBenchmark(): Promise<void> {
  const log = createLogger("warn");
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "gateway-bench-upload-"));
  const postgres = await startEmbeddedPostgres(dataDir, 0, log);
  const s3 = await startMockS3();
  const results: Result[] = [];
  let gateway: GatewayProcess | undefined;
  try {
    const key = newKeySecret();
    gateway = await startGatewayProcess({ databaseUrl: postgres.url, key });
    const base = gateway.url;
    const local = gateway.child.pid!;
    // Loads what an upload needs (parser, detector) so the phases measure the transfer alone.
    await upload(base, key, { head: wav(), size: 64 * 1024 });
    const binary = await measure(local, "upload 100 MB binary (WAV) → local directory, first after start", () =>
      upload(base, key, { head: wav(), size: SIZE }),
    );
    results.push(binary);
    results.push(await measure(local, "the same again", () => upload(base, key, { head: wav(), size: SIZE })));
    results.push(await measure(local, "download it (GET …/content)", () => download(base, key, binary.detail)));
    results.push(
      await measure(local, "upload 100 MB CSV text → local directory", () =>
        upload(base, key, { pattern: CSV_ROW, size: SIZE - (SIZE % CSV_ROW.length) }),
      ),
    );
    await gateway.stop();

    gateway = await startGatewayProcess({ databaseUrl: postgres.url, key, env: s3Env(s3) });
    const s3Base = gateway.url;
    const bucket = gateway.child.pid!;
    await upload(s3Base, key, { head: wav(), size: 64 * 1024 });
    results.push(
      await measure(bucket, "upload 100 MB binary (WAV) → S3 bucket, first after start", () =>
        upload(s3Base, key, { head: wav(), size: SIZE }),
      ),
    );
    results.push(await measure(bucket, "the same again", () => upload(s3Base, key, { head: wav(), size: SIZE })));
    s3.partDelayMs = SLOW_PART_MS;
    results.push(
      await measure(bucket, `the same into a slow bucket (parts answered ${SLOW_PART_MS} ms late)`, () =>
        upload(s3Base, key, { head: wav(), size: SIZE }),
      ),
    );

    const cpu = os.cpus();
    console.log(
      `Machine: ${cpu[0]?.model ?? "unknown CPU"} × ${cpu.length}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ` +
        `Node ${process.version}, ${os.platform()} ${os.release()}`,
    );
    console.log(`Date: ${new Date().toISOString()}\n`);
    console.log("| phase | answer | time | throughput | gateway peak RSS increase |");
    console.log("|---|---|---|---|---|");
    for (const r of results) {
      console.log(
        `| ${r.phase} | ${r.status} ${r.detail} | ${r.seconds.toFixed(2)} s | ` +
          `${(SIZE / 1e6 / r.seconds).toFixed(0)} MB/s | ${r.peakIncreaseMiB.toFixed(1)} MiB |`,
      );
    }
  } finally {
    await gateway?.stop();
    await s3.close();
    await postgres.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

async function measure(
  pid: number,
  phase: string,
  run: () => Promise<{ status: number; detail: string }>,
): Promise<Result> {
  resetPeak(pid);
  const baseline = memoryKiB(pid).rss;
  const started = performance.now();
  const { status, detail } = await run();
  const seconds = (performance.now() - started) / 1000;
  return { phase, seconds, status, detail, peakIncreaseMiB: (memoryKiB(pid).peak - baseline) / 1024 };
}

async function upload(base: string, key: string, options: StreamOptions): Promise<{ status: number; detail: string }> {
  const res = await streamUpload(base, key, options);
  const body = res.body as { id?: string; mime_type?: string } | undefined;
  if (res.status !== 201 || !body?.id) throw new Error(`upload answered ${res.status}: ${JSON.stringify(res.body)}`);
  return { status: res.status, detail: `${body.mime_type} ${body.id}` };
}

async function download(base: string, key: string, uploaded: string): Promise<{ status: number; detail: string }> {
  const id = uploaded.split(" ")[1]!;
  const res = await request(`${base}/api/v1/files/${id}/content`, { headers: { authorization: `Bearer ${key}` } });
  let bytes = 0;
  for await (const chunk of res.body) bytes += (chunk as Buffer).length;
  if (res.statusCode !== 200 || bytes !== SIZE)
    throw new Error(`download answered ${res.statusCode} with ${bytes} bytes`);
  return { status: res.statusCode, detail: `${bytes} bytes` };
}

function s3Env(s3: MockS3): Record<string, string> {
  return {
    GATEWAY_S3_BUCKET: s3.bucket,
    GATEWAY_S3_ENDPOINT: s3.url,
    GATEWAY_S3_ACCESS_KEY_ID: "AKIDBENCH",
    GATEWAY_S3_SECRET_ACCESS_KEY: "bench-secret",
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
  };
}

/** Resets the process's peak resident set (VmHWM) to its current size (Linux ≥ 4.0). */
function resetPeak(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, "5");
}

function memoryKiB(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return {
    rss: Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0),
    peak: Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0),
  };
}
