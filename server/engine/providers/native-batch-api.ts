import type { JsonObject } from "@bufbuild/protobuf";
import type { UpstreamTarget, UpstreamUsage } from "./provider.js";

/**
 * A provider's own batch API (Anthropic message batches; OpenAI-style file batches), used by the
 * batch runner instead of executing items one by one when the provider is configured with
 * `native_batches: true`. Requests and answers are in the OpenAI chat completions format, like the
 * rest of the adapter layer; the implementation translates to and from the provider's dialect.
 * Every method throws UpstreamError (provider.ts) on failure.
 */
export interface NativeBatchRequest {
  /** The gateway's item id, used as the provider's custom id so results can be matched. */
  customId: string;
  /** OpenAI chat completions body without gateway fields; `model` is replaced by the target's. */
  body: JsonObject;
}

export type NativeBatchState = "in_progress" | "ended" | "expired" | "cancelled" | "failed";

export interface NativeBatchStatus {
  state: NativeBatchState;
  /** Why the provider failed the batch as a whole. */
  message?: string;
}

export type NativeBatchResult =
  | { customId: string; ok: true; statusCode: number; body: JsonObject; usage: UpstreamUsage }
  | { customId: string; ok: false; statusCode: number; message: string; type: string };

export interface NativeBatchApi {
  /** Creates the provider-side batch; returns the provider's batch id. */
  submit(target: UpstreamTarget, requests: NativeBatchRequest[], signal: AbortSignal): Promise<string>;
  status(target: UpstreamTarget, upstreamId: string, signal: AbortSignal): Promise<NativeBatchStatus>;
  /** The results of an ended batch (one per request that finished), streamed. */
  results(target: UpstreamTarget, upstreamId: string, signal: AbortSignal): AsyncIterable<NativeBatchResult>;
  cancel(target: UpstreamTarget, upstreamId: string, signal: AbortSignal): Promise<void>;
  /** Deletes the provider-side batch and its files; "unsupported" when the provider has no delete. */
  remove(target: UpstreamTarget, upstreamId: string, signal: AbortSignal): Promise<"deleted" | "unsupported">;
}
