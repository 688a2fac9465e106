import type { JsonObject } from "@bufbuild/protobuf";
import type { UpstreamTarget, UpstreamUsage } from "./provider.js";

/**
 * An OpenAI chat completions request body, already stripped of gateway-only fields (`provider`,
 * `models`, `session_id`, `user`, …). `model` is ignored: the adapter sends `upstreamModelId`.
 */
export type ChatRequestJson = JsonObject;

/** A non-streamed answer: the OpenAI `chat.completion` object (`usage` included when known). */
export interface ChatResult {
  body: JsonObject;
  usage: UpstreamUsage | undefined;
}

/**
 * A streamed answer: OpenAI `chat.completion.chunk` objects in order. `usage` resolves once the
 * stream has ended (from the provider's usage chunk or message_delta), undefined when the provider
 * reported none. The iterator throws UpstreamError when the stream breaks before its end.
 */
export interface ChatStream {
  chunks: AsyncIterable<JsonObject>;
  usage(): UpstreamUsage | undefined;
}

/**
 * An OpenAI embeddings request body (`input`, `dimensions`, `input_type`, and whatever else the
 * client sent), stripped of gateway-only fields like a chat body; the adapter asks for float vectors.
 */
export type EmbeddingsRequestJson = JsonObject;

export interface EmbeddingsResult {
  /** Vectors in input order. */
  vectors: number[][];
  promptTokens: number;
  /** The provider's answer as it came, for the fields the gateway does not know. */
  body: JsonObject;
}

/** Chat completions and embeddings; every method throws UpstreamError (provider.ts) on failure. */
export interface ChatApi {
  chat(target: UpstreamTarget, request: ChatRequestJson, signal: AbortSignal): Promise<ChatResult>;
  /** Resolves once the upstream answered with a success status; chunks follow. */
  chatStream(target: UpstreamTarget, request: ChatRequestJson, signal: AbortSignal): Promise<ChatStream>;
  embeddings(target: UpstreamTarget, request: EmbeddingsRequestJson, signal: AbortSignal): Promise<EmbeddingsResult>;
}

/**
 * The smallest real chat call a provider kind accepts (one token of output), by which private
 * endpoint validation proves an endpoint serves a model, and the answer shape that proves it.
 */
export interface ChatProbe {
  /** `path` sits under the API's base URL (`/chat/completions`); the headers authenticate. */
  request(model: string, credential: string): { path: string; headers: Record<string, string>; body: string };
  /** Whether a 2xx body has the shape this API answers with. */
  answers(body: unknown): boolean;
  /** That shape, as validation's failure message names it. */
  answerName: string;
}
