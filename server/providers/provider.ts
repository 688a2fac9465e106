import type { JsonObject } from "@bufbuild/protobuf";
import type { LookupFunction } from "node:net";

/**
 * The one interface between the inference pipeline and upstream providers. The pipeline speaks
 * the OpenAI wire format (JSON objects as the public API documents them); each adapter translates
 * to what its provider speaks and back, so routing, governance and accounting never see a
 * provider's dialect.
 */
export type ProviderKind = "openai" | "anthropic";

/** How a private endpoint is reached: only at the addresses its guard vetted, with our trust store. */
export interface PinnedConnection {
  lookup: LookupFunction;
  ca: string[];
}

/** Where and how one call goes: a catalog endpoint's provider, or a private endpoint. */
export interface UpstreamTarget {
  kind: ProviderKind;
  /** E.g. `https://api.openai.com/v1`; the adapter appends `/chat/completions`, `/messages`, … */
  baseUrl: string;
  apiKey: string;
  /** The provider's own model name. */
  upstreamModelId: string;
  /** Time allowed until the response headers arrive (524 after it). */
  timeoutMs: number;
  /** Set for private endpoints: connect only to the vetted addresses, trusting our CA bundle. */
  pinned?: PinnedConnection;
}

/**
 * An OpenAI chat completions request body, already stripped of gateway-only fields (`provider`,
 * `models`, `session_id`, `user`, …). `model` is ignored: the adapter sends `upstreamModelId`.
 */
export type ChatRequestJson = JsonObject;

/** Token counts as the OpenAI `usage` object has them, with the details the ledger records. */
export interface UpstreamUsage {
  promptTokens: number;
  completionTokens: number;
  reasoningTokens: number;
  cachedTokens: number;
}

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

/** An OpenAI embeddings request body: `input`, `dimensions`, `input_type`; always float vectors. */
export type EmbeddingsRequestJson = JsonObject;

export interface EmbeddingsResult {
  /** Vectors in input order. */
  vectors: number[][];
  promptTokens: number;
}

export interface ProviderAdapter {
  chat(target: UpstreamTarget, request: ChatRequestJson, signal: AbortSignal): Promise<ChatResult>;
  /** Resolves once the upstream answered with a success status; chunks follow. */
  chatStream(target: UpstreamTarget, request: ChatRequestJson, signal: AbortSignal): Promise<ChatStream>;
  embeddings(target: UpstreamTarget, request: EmbeddingsRequestJson, signal: AbortSignal): Promise<EmbeddingsResult>;
}

/**
 * Why an upstream call failed, in the provider-neutral terms routing decides on.
 * - `status`: the provider answered with an HTTP error status (`status` is set).
 * - `timeout`: no response headers within `timeoutMs`.
 * - `connect`: the connection failed or broke before a response.
 * - `protocol`: the provider answered something that is not its documented format.
 * - `cut`: a stream ended before its final event.
 * - `unsupported`: the adapter cannot serve this call (e.g. embeddings on Anthropic).
 * - `aborted`: the caller's signal aborted the call (client went away).
 */
export type UpstreamFailure = "status" | "timeout" | "connect" | "protocol" | "cut" | "unsupported" | "aborted";

export class UpstreamError extends Error {
  constructor(
    readonly failure: UpstreamFailure,
    message: string,
    readonly options: {
      status?: number;
      /** Seconds, from the provider's `Retry-After`. */
      retryAfterS?: number;
    } = {},
  ) {
    super(message);
  }
}
