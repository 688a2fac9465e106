import type { JsonObject } from "@bufbuild/protobuf";
import { isObject } from "../json-shape.js";
import type { NativeApi } from "../native-api.js";
import { UpstreamError, type UpstreamTarget, type UpstreamUsage } from "../provider.js";
import {
  expectEventStream,
  parseEventData,
  postUpstream,
  readJsonObject,
  upstreamEvents,
  type UpstreamResponse,
} from "../upstream-http.js";
import { inBodyError, type OpenAiRoute } from "./chat.js";
import { usageFromResponses } from "./usage.js";

/**
 * OpenAI's Responses API, natively: POST /responses passes the client's body through (only
 * `model` and `stream` set) and the answer, or every stream event, back as it came. Which hosts
 * serve it is a provider setting, `responses_api`; without it, `speaksByDefault` decides (OpenAI's
 * own host; Azure's v1 surface), and every other OpenAI-compatible host is sent chat instead.
 */
export function openAiCompatibleResponses(
  route: OpenAiRoute,
  speaksByDefault: (target: UpstreamTarget) => boolean,
): NativeApi {
  return {
    speaks: (target) => target.settings?.responsesApi ?? speaksByDefault(target),

    async answer(target, body, signal) {
      const response = await postUpstream(
        target,
        route.path(target, "responses"),
        route.headers(target, "application/json"),
        { ...body, model: target.upstreamModelId },
        signal,
      );
      const answer = await readJsonObject(response);
      if (!Array.isArray(answer.output)) {
        if (isObject(answer.error)) throw inBodyError(answer, target.apiKey);
        throw new UpstreamError("protocol", "the upstream answer has no output array");
      }
      return { body: answer, usage: usageFromResponses(answer.usage) };
    },

    async stream(target, body, signal) {
      const payload = { ...body, model: target.upstreamModelId, stream: true };
      const response = await postUpstream(
        target,
        route.path(target, "responses"),
        route.headers(target, "text/event-stream"),
        payload,
        signal,
      );
      await expectEventStream(response, target.apiKey);
      let usage: UpstreamUsage | undefined;
      return { events: responseEvents(response, target.apiKey, (value) => (usage = value)), usage: () => usage };
    },
  };
}

/** OpenAI's own API, wherever a provider entry of kind openai points at it. */
export function isOpenAiHost(target: UpstreamTarget): boolean {
  try {
    return new URL(target.baseUrl).hostname === "api.openai.com";
  } catch {
    return false;
  }
}

/** The events that end a response, each with the whole `response` (its usage included). */
const TERMINAL_EVENTS = new Set(["response.completed", "response.incomplete", "response.failed"]);

/**
 * The stream's events as the provider sent them. An `error` event is the provider failing the
 * call; the stream is complete at a terminal event, and is read to its end after it so that the
 * connection can be reused.
 */
async function* responseEvents(
  response: UpstreamResponse,
  apiKey: string,
  onUsage: (usage: UpstreamUsage) => void,
): AsyncGenerator<JsonObject, void, undefined> {
  let ended = false;
  for await (const event of upstreamEvents(response)) {
    if (ended || event.data === "[DONE]") continue;
    const data = parseEventData(event.data);
    const type = typeof data.type === "string" ? data.type : (event.event ?? "");
    if (type === "error") throw inBodyError({ error: data }, apiKey);
    data.type = type;
    if (TERMINAL_EVENTS.has(type)) {
      const usage = usageFromResponses(isObject(data.response) ? data.response.usage : undefined);
      if (usage) onUsage(usage);
      ended = true;
    }
    yield data;
  }
  if (!ended) throw new UpstreamError("cut", "the upstream stream ended before its final event");
}
