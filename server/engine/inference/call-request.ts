import type { JsonObject } from "@bufbuild/protobuf";
import type { ProviderPreferences } from "../../../gen/gateway/v1/inference_pb.js";
import type { ApplyingGuardrail } from "../governance/applying-guardrails.js";
import type { CachedAnswer } from "../response-cache/cached-answer.js";
import type { Attempt, InferenceApi } from "./routing.js";

/** What a pipeline (chat completions, embeddings, a translated format, a decision) asks a live call to do. */
export interface CallRequest {
  api: InferenceApi;
  /**
   * The bodies the call will send upstream (one per upstream request of an attempt): the content
   * filters of the caller's guardrails rewrite their input side in place, or refuse the call,
   * before it is routed or admitted.
   */
  bodies: readonly JsonObject[];
  /** The requested model, then fallbacks. */
  modelIds: string[];
  preferences: ProviderPreferences | undefined;
  /** Request parameters in use (for `require_parameters`). */
  parameters: string[];
  user: string | undefined;
  /** From the body, else the `x-session-id` header. */
  sessionId: string | undefined;
  promptTokens: number;
  /** The request's completion token cap, if any. */
  completionTokens: number | undefined;
  serverTools: string[];
  streamed: boolean;
  /** The call's use of the response cache, when it asked for it (server/engine/response-cache). */
  cache?: CacheProbe;
}

/** Looks up a cached answer once the route is planned, before admission: a hit goes nowhere upstream. */
export interface CacheProbe {
  lookup(caller: CacheCaller, first: Attempt, signal: AbortSignal): Promise<CachedAnswer | undefined>;
}

/** What the cache reads of the caller: its workspace, and its guardrails (one demanding ZDR turns the cache off). */
export interface CacheCaller {
  workspace: CacheWorkspace;
  guardrails: readonly ApplyingGuardrail[];
}

/** What the cache reads of the caller's workspace: its id, and its default TTL. */
export interface CacheWorkspace {
  id: string;
  cacheTtlSeconds: number | null;
}
