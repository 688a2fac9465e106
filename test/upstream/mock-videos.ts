import type http from "node:http";
import { parseJson } from "./mock-batch-exchange.js";
import { authorized, header, sendError, sendJson, type Json } from "./mock-wire.js";

/**
 * OpenAI's Videos API as the mock serves it under `/openai/v1`: `POST /videos` (JSON), `POST
 * /videos/extensions`, `GET /videos/{id}`, `GET /videos/{id}/content`, `DELETE /videos/{id}`.
 * Time plays no part: a job is `queued` when created and moves one step per status read, to
 * `in_progress`, then to `completed` (or `failed` when it was created after `failNext`); `hold`
 * keeps jobs `in_progress` until cleared. The same `idempotency-key` returns the same job. Content
 * is deterministic bytes (an MP4 `ftyp` box and the job id) so tests can compare what was stored.
 */
export type VideoOperation = "create" | "status" | "content" | "delete";

export interface MockVideoJob {
  id: string;
  model: string;
  body: Json;
  status: "queued" | "in_progress" | "completed" | "failed";
  failWith?: string;
  deleted: boolean;
}

export interface MockVideos {
  readonly jobs: ReadonlyMap<string, MockVideoJob>;
  /** Calls per operation since the last reset. */
  readonly calls: Readonly<Record<VideoOperation, number>>;
  /** Jobs stay `in_progress` while set. */
  hold: boolean;
  /** The next job created fails at the end of its run with this message. */
  failNext: string | undefined;
  /** Seconds reported by completed jobs instead of the requested ones. */
  reportSeconds: number | undefined;
  /** The next this many downloads break off halfway (the connection is destroyed). */
  cutDownloads: number;
  /** The next `times` calls of `operation` answer `status` (with Retry-After when given). */
  fail(operation: VideoOperation, status: number, options?: { times?: number; retryAfter?: number }): void;
  /** The next call of `operation` gets no answer until `release()`; resolves once that call has arrived. */
  hang(operation: VideoOperation): Promise<void>;
  /** Answers every call left hanging. */
  release(): void;
  /** The bytes of a job's video. */
  contentOf(id: string): Buffer;
}

interface Fault {
  operation: VideoOperation;
  status: number;
  times: number;
  retryAfter?: number;
}

const V1 = "/openai/v1";
const JOB_PATH = /^\/openai\/v1\/videos\/([^/]+)(\/content)?$/;

export class MockVideoStore implements MockVideos {
  jobs = new Map<string, MockVideoJob>();
  calls: Record<VideoOperation, number> = { create: 0, status: 0, content: 0, delete: 0 };
  hold = false;
  failNext: string | undefined;
  reportSeconds: number | undefined;
  cutDownloads = 0;
  private sequence = 0;
  private faults: Fault[] = [];
  private hanging = new Map<VideoOperation, () => void>();
  private held: Array<() => void> = [];
  private idempotencyKeys = new Map<string, string>();

  fail(operation: VideoOperation, status: number, options: { times?: number; retryAfter?: number } = {}): void {
    this.faults.push({ operation, status, times: options.times ?? 1, retryAfter: options.retryAfter });
  }

  hang(operation: VideoOperation): Promise<void> {
    return new Promise<void>((resolve) => this.hanging.set(operation, resolve));
  }

  release(): void {
    this.hanging.clear();
    for (const answer of this.held.splice(0)) answer();
  }

  contentOf(id: string): Buffer {
    return Buffer.concat([
      Buffer.from([0, 0, 0, 0x18]),
      Buffer.from("ftypmp42"),
      Buffer.from(`mock video ${id} `.padEnd(4096, ".")),
    ]);
  }

  reset(): void {
    this.release();
    this.sequence = 0;
    this.faults = [];
    this.idempotencyKeys.clear();
    this.jobs.clear();
    this.calls = { create: 0, status: 0, content: 0, delete: 0 };
    this.hold = false;
    this.failNext = undefined;
    this.reportSeconds = undefined;
    this.cutDownloads = 0;
  }

  /** Serves a video route; false when the request is not one (the other routes take it then). */
  handle(req: http.IncomingMessage, res: http.ServerResponse, raw: Buffer, record: (body: unknown) => void): boolean {
    const path = (req.url ?? "").split("?")[0] ?? "";
    if (!path.startsWith(`${V1}/videos`)) return false;
    record(parseJson(raw));
    if (!authorized("openai", req, res)) return true;
    const match = JOB_PATH.exec(path);
    const job = match ? this.jobs.get(decodeURIComponent(match[1]!)) : undefined;
    const live = job && !job.deleted ? job : undefined;
    const missing = () => sendError(res, "openai", 404, `mock upstream: no video ${match?.[1] ?? ""}`);
    if (req.method === "POST" && (path === `${V1}/videos` || path === `${V1}/videos/extensions`)) {
      this.serve("create", res, () => this.create(req, res, raw, path.endsWith("/extensions")));
    } else if (req.method === "GET" && match && !match[2]) {
      this.serve("status", res, () => (live ? this.status(res, live) : missing()));
    } else if (req.method === "GET" && match) {
      this.serve("content", res, () => (live ? this.content(res, live) : missing()));
    } else if (req.method === "DELETE" && match && !match[2]) {
      this.serve("delete", res, () => {
        if (!live) return missing();
        live.deleted = true;
        sendJson(res, 200, { id: live.id, object: "video.deleted", deleted: true });
      });
    } else {
      sendError(res, "openai", 404, `mock upstream: no route ${req.method} ${path}`);
    }
    return true;
  }

  /** Answers now, or as a configured failure, or not until `release()`. */
  private serve(operation: VideoOperation, res: http.ServerResponse, answer: () => void): void {
    this.calls[operation] += 1;
    const arrived = this.hanging.get(operation);
    if (arrived) {
      this.hanging.delete(operation);
      this.held.push(answer);
      arrived();
      return;
    }
    const index = this.faults.findIndex((f) => f.operation === operation);
    const fault = this.faults[index];
    if (!fault) return answer();
    if (--fault.times <= 0) this.faults.splice(index, 1);
    sendError(
      res,
      "openai",
      fault.status,
      `mock upstream failure ${fault.status}`,
      fault.retryAfter === undefined ? {} : { "retry-after": String(fault.retryAfter) },
    );
  }

  private create(req: http.IncomingMessage, res: http.ServerResponse, raw: Buffer, extension: boolean): void {
    const body = parseJson(raw);
    if (!body) return sendError(res, "openai", 400, "the request body is not a JSON object");
    const key = header(req.headers["idempotency-key"]);
    const known = key === undefined ? undefined : this.jobs.get(this.idempotencyKeys.get(key) ?? "");
    if (known) return sendJson(res, 200, this.videoJson(known));
    if (typeof body.prompt !== "string" || body.prompt === "")
      return sendError(res, "openai", 400, "mock upstream: prompt is required");
    if (typeof body.seconds !== "string" || !/^[0-9]+$/.test(body.seconds))
      return sendError(res, "openai", 400, "mock upstream: seconds must be a string of digits");
    if (body.size !== undefined && (typeof body.size !== "string" || !/^[0-9]+x[0-9]+$/.test(body.size)))
      return sendError(res, "openai", 400, "mock upstream: size must be WIDTHxHEIGHT");
    let model = typeof body.model === "string" ? body.model : "";
    if (extension) {
      const reference = typeof body.video === "object" && body.video !== null ? (body.video as Json).id : undefined;
      const source = this.jobs.get(typeof reference === "string" ? reference : "");
      if (source?.status !== "completed")
        return sendError(res, "openai", 404, "mock upstream: no completed video to extend");
      model = source.model;
    } else if (model === "") {
      return sendError(res, "openai", 400, "mock upstream: model is required");
    }
    this.sequence += 1;
    const job: MockVideoJob = { id: `video_mock_${this.sequence}`, model, body, status: "queued", deleted: false };
    if (this.failNext !== undefined) job.failWith = this.failNext;
    this.failNext = undefined;
    this.jobs.set(job.id, job);
    if (key !== undefined) this.idempotencyKeys.set(key, job.id);
    sendJson(res, 200, this.videoJson(job));
  }

  private status(res: http.ServerResponse, job: MockVideoJob): void {
    if (job.status === "queued") job.status = "in_progress";
    else if (job.status === "in_progress" && !this.hold)
      job.status = job.failWith === undefined ? "completed" : "failed";
    sendJson(res, 200, this.videoJson(job));
  }

  private content(res: http.ServerResponse, job: MockVideoJob): void {
    if (job.status !== "completed") return sendError(res, "openai", 400, "mock upstream: the video is not completed");
    const bytes = this.contentOf(job.id);
    res.writeHead(200, { "content-type": "video/mp4", "content-length": bytes.length });
    if (this.cutDownloads > 0) {
      this.cutDownloads -= 1;
      res.write(bytes.subarray(0, bytes.length / 2), () => res.destroy());
      return;
    }
    res.end(bytes);
  }

  private videoJson(job: MockVideoJob): Json {
    const done = job.status === "completed";
    const now = Math.floor(Date.now() / 1000);
    return {
      id: job.id,
      object: "video",
      model: job.model,
      status: job.status,
      progress: done ? 100 : job.status === "in_progress" ? 50 : 0,
      created_at: now,
      completed_at: done ? now : null,
      expires_at: null,
      prompt: job.body.prompt ?? null,
      seconds: done && this.reportSeconds !== undefined ? String(this.reportSeconds) : job.body.seconds,
      size: job.body.size ?? "720x1280",
      remixed_from_video_id: null,
      error: job.status === "failed" ? { code: "video_generation_failed", message: job.failWith ?? "failed" } : null,
    };
  }
}
