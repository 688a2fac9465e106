import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { VideoFrameType, VideoFrameTypeSchema, type CreateVideoRequest } from "../../../gen/gateway/v1/videos_pb.js";
import type { CatalogVideoModel } from "../../engine/catalog/video-models.js";
import { gatewayError } from "../../../wire/errors.js";
import { wireName } from "../../../wire/enums.js";
import type { VideoSubmission } from "../../engine/providers/video-api.js";

/**
 * A video request checked against the capabilities the model declares (GET /videos/models): every
 * value outside them is a 400 naming the field, before anything is reserved or sent. Rules of a
 * single field without the model (patterns, counts) are the proto's and were checked before.
 */
export type VideoRequestSpec = Omit<VideoSubmission, "parameters" | "continues" | "idempotencyKey"> & {
  resolution: string | undefined;
  /** `provider.options`: provider slug → parameters; only the serving provider's are sent. */
  passthrough: Record<string, JsonObject>;
};

/** The earlier job a request continues (`previous_job_id`), as far as the rules need it. */
export interface ContinuedJob {
  id: string;
  modelId: string;
  status: string;
}

const MAX_PROMPT_CHARS = 32_000;
const IMAGE_URL = /^(https:\/\/\S+|data:image\/[a-z0-9.+-]+;base64,[A-Za-z0-9+/]+={0,2})$/i;

export function videoRequestSpec(
  model: CatalogVideoModel,
  req: CreateVideoRequest,
  previous: ContinuedJob | undefined,
): VideoRequestSpec {
  const of = `model ${model.id}`;
  // OpenRouter signs its webhooks with a per-workspace secret; without one a notification could be
  // forged, so none is sent.
  if (req.callbackUrl !== undefined)
    throw gatewayError(400, "callback_url is not supported by this gateway: poll the job's polling_url");
  if (previous) checkContinuation(model, req, previous);
  const prompt = req.prompt;
  if (prompt !== undefined && prompt.trim() === "") throw gatewayError(400, "prompt must not be empty");
  if (prompt !== undefined && [...prompt].length > MAX_PROMPT_CHARS)
    throw gatewayError(400, `prompt must be at most ${MAX_PROMPT_CHARS} characters`);
  if (prompt === undefined && (previous || req.frameImages.length === 0)) {
    throw gatewayError(
      400,
      previous ? "prompt is required to continue a job" : "prompt is required unless frame_images are given",
    );
  }
  const seconds = req.duration ?? model.defaultDuration;
  if (!model.supportedDurations.includes(seconds))
    throw gatewayError(400, `duration must be one of ${model.supportedDurations.join(", ")} (seconds) for ${of}`);
  const resolution =
    oneOf("resolution", req.resolution, model.supportedResolutions, of) ?? model.supportedResolutions[0];
  const aspectRatio = oneOf("aspect_ratio", req.aspectRatio, model.supportedAspectRatios, of);
  const size = oneOf("size", req.size, model.supportedSizes ?? [], of);
  if (req.seed !== undefined && model.seed === false) throw gatewayError(400, `seed is not supported by ${of}`);
  if (req.seed !== undefined && (req.seed < 0n || req.seed > BigInt(Number.MAX_SAFE_INTEGER)))
    throw gatewayError(400, `seed must be an integer from 0 to ${Number.MAX_SAFE_INTEGER}`);
  if (req.generateAudio === true && !model.generateAudio)
    throw gatewayError(400, `generate_audio is not supported by ${of}`);
  const frames = frameUrls(model, req, of);
  if (req.inputReferences.length > model.maxInputReferences) {
    throw gatewayError(
      400,
      model.maxInputReferences === 0
        ? `input_references are not supported by ${of}`
        : `input_references: ${of} accepts at most ${model.maxInputReferences}`,
    );
  }
  const referenceUrls = req.inputReferences.map((reference, i) =>
    imageUrl(`input_references[${i}]`, reference.type, reference.imageUrl?.url),
  );
  return {
    prompt,
    seconds,
    size,
    resolution,
    aspectRatio,
    seed: req.seed === undefined ? undefined : Number(req.seed),
    generateAudio: req.generateAudio,
    firstFrameUrl: frames.get(VideoFrameType.FIRST_FRAME),
    lastFrameUrl: frames.get(VideoFrameType.LAST_FRAME),
    referenceUrls,
    passthrough: passthroughOf(model, req.provider, of),
  };
}

/** A continuation keeps the earlier job's model and format; only prompt and duration are its own. */
function checkContinuation(model: CatalogVideoModel, req: CreateVideoRequest, previous: ContinuedJob): void {
  if (previous.modelId !== model.id)
    throw gatewayError(
      400,
      `previous_job_id ${previous.id} is a job of model ${previous.modelId}; continue it with that model`,
    );
  if (previous.status !== "completed")
    throw gatewayError(
      400,
      `previous_job_id ${previous.id} is ${previous.status}; only a completed job can be continued`,
    );
  const fixed: Array<[string, boolean]> = [
    ["resolution", req.resolution !== undefined],
    ["aspect_ratio", req.aspectRatio !== undefined],
    ["size", req.size !== undefined],
    ["frame_images", req.frameImages.length > 0],
    ["input_references", req.inputReferences.length > 0],
  ];
  const clash = fixed.find(([, set]) => set);
  if (clash)
    throw gatewayError(
      400,
      `${clash[0]} cannot be combined with previous_job_id: a continuation keeps the format of the job it continues`,
    );
}

function oneOf(field: string, value: string | undefined, supported: readonly string[], of: string): string | undefined {
  if (value === undefined) return undefined;
  if (supported.length === 0) throw gatewayError(400, `${field} is not supported by ${of}`);
  if (!supported.includes(value))
    throw gatewayError(400, `${field} must be one of ${supported.join(", ")} for ${of}, got ${JSON.stringify(value)}`);
  return value;
}

function frameUrls(model: CatalogVideoModel, req: CreateVideoRequest, of: string): Map<VideoFrameType, string> {
  const frames = new Map<VideoFrameType, string>();
  req.frameImages.forEach((frame, i) => {
    const field = `frame_images[${i}]`;
    const name = wireName(VideoFrameTypeSchema, frame.frameType) ?? "";
    if (!(model.supportedFrameImages as string[]).includes(name)) {
      const supported = model.supportedFrameImages.length === 0 ? "none" : model.supportedFrameImages.join(", ");
      throw gatewayError(400, `${field}.frame_type ${name} is not supported by ${of} (supported: ${supported})`);
    }
    if (frames.has(frame.frameType)) throw gatewayError(400, `${field}.frame_type: ${name} is given twice`);
    frames.set(frame.frameType, imageUrl(field, frame.type, frame.imageUrl?.url));
  });
  return frames;
}

function imageUrl(field: string, type: string, url: string | undefined): string {
  if (type !== "" && type !== "image_url") throw gatewayError(400, `${field}.type must be image_url`);
  if (url === undefined || !IMAGE_URL.test(url))
    throw gatewayError(400, `${field}.image_url.url must be an https URL or a base64 data URL of an image`);
  return url;
}

/**
 * `provider.options.<provider slug>.parameters`, OpenRouter's place for provider-specific
 * parameters; every name must be one of the model's `allowed_passthrough_parameters`. Other keys
 * of `provider` are ignored like any unknown request field.
 */
function passthroughOf(
  model: CatalogVideoModel,
  provider: JsonObject | undefined,
  of: string,
): Record<string, JsonObject> {
  const options = provider?.options;
  if (options === undefined || options === null) return {};
  const out: Record<string, JsonObject> = {};
  for (const [slug, entry] of Object.entries(objectAt("provider.options", options))) {
    const path = `provider.options.${slug}`;
    const { parameters, ...rest } = objectAt(path, entry);
    const unknown = Object.keys(rest)[0];
    if (unknown !== undefined)
      throw gatewayError(
        400,
        `${path}.${unknown} is not supported; provider-specific values go under ${path}.parameters`,
      );
    if (parameters === undefined || parameters === null) continue;
    const values = objectAt(`${path}.parameters`, parameters);
    for (const name of Object.keys(values)) {
      if (!model.allowedPassthroughParameters.includes(name)) {
        const allowed =
          model.allowedPassthroughParameters.length === 0 ? "none" : model.allowedPassthroughParameters.join(", ");
        throw gatewayError(
          400,
          `${path}.parameters.${name} is not an allowed passthrough parameter of ${of} (allowed: ${allowed})`,
        );
      }
    }
    out[slug] = values;
  }
  return out;
}

function objectAt(path: string, value: JsonValue | undefined): JsonObject {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw gatewayError(400, `${path} must be an object`);
  return value;
}
