import type { LookupFunction } from "node:net";
import type { ProviderKind } from "./provider-kind.js";

export type { ProviderKind };

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
  /**
   * The largest 2xx answer read whole (upstream-http.ts): lower for a private endpoint
   * (GATEWAY_PRIVATE_ENDPOINT_MAX_ANSWER_MIB) than MAX_JSON_ANSWER_BYTES, which applies without it.
   */
  maxAnswerBytes?: number;
  /** What the kind needs beyond a base URL and a key; absent for the kinds that need nothing more. */
  settings?: ProviderSettings;
}

/**
 * A provider's settings beyond its base URL and key, from its GATEWAY_CONFIG entry
 * (docs/providers.md). Each is read only by the kind it names.
 */
export interface ProviderSettings {
  /** azure: the `api-version` query parameter; `v1` selects Azure's `/openai/v1/` surface. */
  apiVersion?: string;
  /**
   * openai, azure: whether the host serves OpenAI's Responses API (`responses_api`), so that
   * POST /responses goes to it natively; unset, the kind's default (openai/responses.ts).
   */
  responsesApi?: boolean;
  /**
   * bedrock: SigV4 credentials. Without them the target's `apiKey` is a Bedrock API key, sent as
   * a bearer token. With them `apiKey` is the secret access key, so that error scrubbing covers it.
   */
  aws?: AwsCredentials;
  /** google: a service account (Vertex AI); calls carry its OAuth token instead of `x-goog-api-key`. */
  googleServiceAccount?: GoogleServiceAccount;
}

export interface AwsCredentials {
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** The fields of a Google service account's JSON key that a token exchange needs. */
export interface GoogleServiceAccount {
  clientEmail: string;
  privateKey: string;
  /** Where the signed assertion is exchanged for a token; Google's own by default. */
  tokenUri?: string;
  /**
   * The key file it was read from (GATEWAY_CONFIG), closed to other OS users at start
   * (server/platform/storage/private-paths.ts).
   */
  keyFile?: string;
}

/**
 * Token counts as the OpenAI `usage` object has them, with the details the ledger records.
 * `promptTokens` counts every prompt token; the cache reads and writes are parts of it.
 */
export interface UpstreamUsage {
  promptTokens: number;
  completionTokens: number;
  reasoningTokens: number;
  /** Prompt tokens read from the provider's prompt cache. */
  cachedTokens: number;
  /** Prompt tokens written to the provider's prompt cache; absent where nothing reports them (counted 0). */
  cacheWriteTokens?: number;
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
