/**
 * OpenAI's Videos API (and compatible providers): `POST /videos` creates a job (`queued`), `POST
 * /videos/extensions` continues a completed one, `GET /videos/{id}` reports `queued`, `in_progress`,
 * `completed` or `failed` (with `error.message`), `GET /videos/{id}/content` serves the MP4 and
 * `DELETE /videos/{id}` removes it. One job has one output. OpenAI takes an exact `size` rather
 * than resolution and aspect ratio, so those become a size here; capabilities OpenAI lacks (seed,
 * audio, last frame, reference images) are sent under the gateway's names only when a request uses
 * them, which the model's configured capabilities allow only for providers that accept them.
 *
 * @module
 */
import type { JsonObject } from "@bufbuild/protobuf";
import { isObject } from "../json-shape.js";
import { pathSegment } from "../native-batch-wire.js";
import { UpstreamError, type UpstreamTarget } from "../provider.js";
import { providerErrorMessage } from "../upstream-error-body.js";
import { abortedError, callUpstream, discardBody, readJsonObject, type UpstreamResponse } from "../upstream-http.js";
import type { UpstreamVideo, UpstreamVideoState, VideoApi, VideoSubmission } from "../video-api.js";

const STATES: Record<string, UpstreamVideoState> = {
  queued: "queued",
  in_progress: "in_progress",
  completed: "completed",
  failed: "failed",
  cancelled: "cancelled",
};

export const openAiVideo: VideoApi = {
  async create(target, submission, signal) {
    const body = submission.continues === undefined ? createBody(target, submission) : extensionBody(submission);
    const path = submission.continues === undefined ? "/videos" : "/videos/extensions";
    const response = await callUpstream(
      target,
      {
        method: "POST",
        path,
        headers: { ...headersFor(target), "idempotency-key": submission.idempotencyKey },
        body: { contentType: "application/json", data: JSON.stringify(body) },
      },
      signal,
    );
    return videoOf(await readJsonObject(response), target.apiKey);
  },

  async status(target, upstreamId, signal) {
    const response = await callUpstream(
      target,
      { method: "GET", path: `/videos/${pathSegment(upstreamId)}`, headers: headersFor(target) },
      signal,
    );
    return videoOf(await readJsonObject(response), target.apiKey);
  },

  async content(target, upstreamId, index, signal) {
    if (index !== 0) throw new UpstreamError("unsupported", `an OpenAI video job has one output, not ${index + 1}`);
    const response = await callUpstream(
      target,
      {
        method: "GET",
        path: `/videos/${pathSegment(upstreamId)}/content?variant=video`,
        headers: { authorization: `Bearer ${target.apiKey}`, accept: "video/*" },
      },
      signal,
    );
    const type = response.headers["content-type"];
    return { contentType: (Array.isArray(type) ? type[0] : type) ?? "video/mp4", body: bytesOf(response) };
  },

  async remove(target, upstreamId, signal) {
    try {
      await discardBody(
        await callUpstream(
          target,
          { method: "DELETE", path: `/videos/${pathSegment(upstreamId)}`, headers: headersFor(target) },
          signal,
        ),
      );
    } catch (err) {
      if (!(err instanceof UpstreamError && err.options.status === 404)) throw err;
    }
  },
};

function headersFor(target: UpstreamTarget): Record<string, string> {
  return { authorization: `Bearer ${target.apiKey}`, accept: "application/json" };
}

function createBody(target: UpstreamTarget, s: VideoSubmission): JsonObject {
  const body: JsonObject = { ...s.parameters, model: target.upstreamModelId, seconds: String(s.seconds) };
  if (s.prompt !== undefined) body.prompt = s.prompt;
  const size = s.size ?? sizeOf(s.resolution, s.aspectRatio);
  if (size !== undefined) body.size = size;
  if (s.firstFrameUrl !== undefined) body.input_reference = { image_url: s.firstFrameUrl };
  if (s.lastFrameUrl !== undefined) body.last_frame = { image_url: s.lastFrameUrl };
  if (s.referenceUrls.length > 0) body.input_references = s.referenceUrls.map((url) => ({ image_url: url }));
  if (s.seed !== undefined) body.seed = s.seed;
  if (s.generateAudio !== undefined) body.generate_audio = s.generateAudio;
  return body;
}

function extensionBody(s: VideoSubmission): JsonObject {
  const body: JsonObject = { ...s.parameters, video: { id: s.continues ?? "" }, seconds: String(s.seconds) };
  if (s.prompt !== undefined) body.prompt = s.prompt;
  return body;
}

/** `720p` at `16:9` is 1280x720, at `9:16` 720x1280: the short side is the resolution's number. */
export function sizeOf(resolution: string | undefined, aspectRatio: string | undefined): string | undefined {
  const lines = /^([0-9]+)p$/.exec(resolution ?? "")?.[1];
  const ratio = /^([0-9]+):([0-9]+)$/.exec(aspectRatio ?? "");
  if (lines === undefined || !ratio) return undefined;
  const [w, h] = [Number(ratio[1]), Number(ratio[2])];
  const short = Number(lines);
  const long = Math.round((short * Math.max(w, h)) / Math.min(w, h));
  return w >= h ? `${long}x${short}` : `${short}x${long}`;
}

function videoOf(json: JsonObject, apiKey: string): UpstreamVideo {
  if (typeof json.id !== "string" || json.id === "")
    throw new UpstreamError("protocol", "the upstream video has no id");
  const state = STATES[typeof json.status === "string" ? json.status : ""];
  if (!state) throw new UpstreamError("protocol", "the upstream video has no known status");
  const seconds = Number(json.seconds);
  const video: UpstreamVideo = { id: json.id, state, outputs: state === "completed" ? 1 : 0 };
  if (Number.isInteger(seconds) && seconds > 0) video.seconds = seconds;
  if (state === "failed")
    video.error =
      (isObject(json.error) ? providerErrorMessage({ error: json.error }, apiKey) : undefined) ??
      "the provider failed the video job";
  return video;
}

/** The body's bytes; a connection that breaks off is `cut` (or `aborted` when we stopped it). */
async function* bytesOf(response: UpstreamResponse): AsyncGenerator<Uint8Array, void, undefined> {
  try {
    for await (const chunk of response.body) yield chunk as Uint8Array;
  } catch {
    if (response.signal.aborted) throw abortedError();
    throw new UpstreamError("cut", "the upstream video download broke off");
  } finally {
    if (!response.body.readableEnded) response.body.destroy();
  }
}
