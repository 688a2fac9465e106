import type { DescMethod } from "@bufbuild/protobuf";
import type { Route } from "../../facade/route-table.js";
import { DecisionsService } from "../../gen/gateway/alpha/decisions_pb.js";
import { BatchesService } from "../../gen/gateway/v1/batches_pb.js";
import { InferenceService } from "../../gen/gateway/v1/inference_pb.js";
import { CACHE_CONTROL_HEADER, CACHE_STATUS_HEADER, CACHE_TTL_HEADER } from "../../wire/cache-headers.js";
import { CONTENT_FLAGGED_HEADER, PROVIDER_KEY_HEADER } from "../../wire/exchange.js";
import { GENERATION_ID_HEADER } from "../../wire/generation-headers.js";
import { REQUEST_ID_HEADER } from "../../wire/request-id.js";
import { OVERHEAD_MS_HEADER, UPSTREAM_MS_HEADER } from "../../wire/timing-headers.js";
import type { Header, JsonSchema, Parameter, Reference } from "./openapi-types.js";

/**
 * Every header of the REST API beyond HTTP's own, in one list: what the gateway reads from a
 * request (header parameters of the operations) and what it sets on its answers (response
 * headers), each with the kind of route it goes with. Names come from the constants the facade
 * and the core use (wire/), so the document cannot name another header than the one served.
 */
export type RouteKind =
  /** Every route. */
  | "every"
  /**
   * Answered by an inference call, and cacheable (docs/cache.md): chat completions, embeddings,
   * Responses, Messages.
   */
  | "inference"
  /** Reaches a provider through an inference call: the inference routes and decisions. */
  | "provider-call"
  /** Picks a provider key by session: the chat pipeline (chat completions, Responses, Messages) and decisions. */
  | "session"
  /** The Responses and Messages APIs, whose answers may keep the provider's own id. */
  | "responses-messages"
  /** Submits a batch. */
  | "batch-submission";

export interface DocumentedHeader {
  /** As the wire names it (HTTP header names are case-insensitive). */
  name: string;
  /** Read from requests (a header parameter), or set on answers: successes, errors, or both. */
  on: "request" | "success" | "error" | "every-answer";
  routes: RouteKind;
  description: string;
  schema: JsonSchema;
}

const MILLISECONDS: JsonSchema = {
  type: "string",
  pattern: "^\\d+\\.\\d{3}$",
  description: "Milliseconds, with three decimals.",
};

export const DOCUMENTED_HEADERS: readonly DocumentedHeader[] = [
  {
    name: REQUEST_ID_HEADER,
    on: "request",
    routes: "every",
    description:
      "The caller's id for the request: kept when it is 1 to 128 of `[A-Za-z0-9._:-]`, " +
      "else replaced by a fresh one (never refused). " +
      "It names the request in the gateway's logs, traces and usage records.",
    schema: { type: "string", maxLength: 128 },
  },
  {
    name: REQUEST_ID_HEADER,
    on: "every-answer",
    routes: "every",
    description: "The request's id: the caller's `x-request-id` when acceptable, else a fresh UUID.",
    schema: { type: "string" },
  },
  {
    name: OVERHEAD_MS_HEADER,
    on: "every-answer",
    routes: "every",
    description:
      "What the gateway added to the request until the answer's head: " +
      "the time since it arrived less the time spent waiting on providers.",
    schema: MILLISECONDS,
  },
  {
    name: "retry-after",
    on: "error",
    routes: "every",
    description:
      "On a `429` (a rate limit: the key's, its workspace's or the gateway's default; " +
      "the free-model quota, a provider's rate limit passed on, an intern's turn limit) " +
      "and on a `503` of admission: the seconds to wait before trying again. " +
      "A request larger than a token limit, which no wait can admit, has none and `x-should-retry: false` instead.",
    schema: { type: "string", pattern: "^\\d+$" },
  },
  {
    name: CACHE_TTL_HEADER,
    on: "request",
    routes: "inference",
    description:
      "Seconds an answer to this request may be served from the response cache, " +
      "from 1 to `GATEWAY_CACHE_MAX_TTL_SECONDS`; anything else is a `400`. " +
      "Without it, the workspace's `svc_cache_ttl_seconds` applies, if set.",
    schema: { type: "string", pattern: "^\\d+$" },
  },
  {
    name: CACHE_CONTROL_HEADER,
    on: "request",
    routes: "inference",
    description:
      "`no-cache`: skip the cache lookup, call the provider, and store the fresh answer in place of the old one.",
    schema: { type: "string" },
  },
  {
    name: CACHE_STATUS_HEADER,
    on: "success",
    routes: "inference",
    description:
      "What the response cache did: `hit` (answered from the cache, billed 0), " +
      "`miss` (looked up, not found; the answer was stored), `bypass` (not looked up).",
    schema: { type: "string", enum: ["hit", "miss", "bypass"] },
  },
  {
    name: UPSTREAM_MS_HEADER,
    on: "success",
    routes: "provider-call",
    description:
      "The time spent waiting on providers until the answer's head, every attempt included " +
      "(a stream: until its first chunk). Absent when no provider was called (a cache hit).",
    schema: MILLISECONDS,
  },
  {
    name: PROVIDER_KEY_HEADER,
    on: "success",
    routes: "provider-call",
    description:
      "Which key of the provider's key pool answered: `<provider>/key-<position>`, " +
      "never the key. Absent when the provider has one key.",
    schema: { type: "string", pattern: "^[^/]+/key-\\d+$" },
  },
  {
    name: CONTENT_FLAGGED_HEADER,
    on: "success",
    routes: "provider-call",
    description:
      "`true` when a `flag` content filter of a guardrail matched the request's input " +
      "(the call went through unchanged). Absent otherwise.",
    schema: { type: "string", enum: ["true"] },
  },
  {
    name: GENERATION_ID_HEADER,
    on: "success",
    routes: "responses-messages",
    description:
      "The call's generation id (`gen-…`), which finds it in `GET /generation` and the activity: " +
      "an answer the provider gave natively keeps the provider's own `id`, which `previous_response_id` names.",
    schema: { type: "string" },
  },
  ...(["requests", "tokens"] as const).flatMap(rateLimitHeaders),
  {
    name: "x-session-id",
    on: "request",
    routes: "session",
    description:
      "The session the call belongs to (at most 256 characters), when the body has no `session_id`: " +
      "calls of one session go to the same key of a provider's key pool, and the usage records name it.",
    schema: { type: "string", maxLength: 256 },
  },
  {
    name: "idempotency-key",
    on: "request",
    routes: "batch-submission",
    description:
      "Makes retries safe: the same key with the same body answers the same batch; with another body, `409`.",
    schema: { type: "string" },
  },
];

/**
 * OpenAI's rate-limit headers (docs/api/limits.md), which its SDKs and agent frameworks read: on
 * every inference answer and on the 429 of a limit, for the tightest limit of each kind that
 * applies to the call; a kind with no limit that applies has none.
 */
function rateLimitHeaders(kind: "requests" | "tokens"): DocumentedHeader[] {
  const limit =
    `the tightest ${kind === "requests" ? "request" : "token"} limit that ` +
    "applies to the call (the key's, its workspace's, the gateway's default)";
  const on = "every-answer";
  const routes = "provider-call";
  return [
    {
      name: `x-ratelimit-limit-${kind}`,
      on,
      routes,
      description: `On inference answers and their 429s: the size of ${limit}, in ${kind} per window.`,
      schema: { type: "string", pattern: "^\\d+$" },
    },
    {
      name: `x-ratelimit-remaining-${kind}`,
      on,
      routes,
      description:
        `On inference answers and their 429s: the ${kind} left in the window of ${limit}, ` +
        "this call counted; the answering instance's estimate, within the lease slack.",
      schema: { type: "string", pattern: "^\\d+$" },
    },
    {
      name: `x-ratelimit-reset-${kind}`,
      on,
      routes,
      description:
        `On inference answers and their 429s: when the window of ${limit} ends, ` +
        `as OpenAI writes durations (\`20ms\`, \`1.5s\`, \`6m0s\`).`,
      schema: { type: "string" },
    },
  ];
}

/**
 * `gateway.v1.InferenceService/CreateChatCompletionFromJson`: how a method is named here, whichever
 * descriptors it comes from.
 */
function rpcName(method: DescMethod): string {
  return `${method.parent.typeName}/${method.name}`;
}

const INFERENCE = new Set(
  [
    InferenceService.method.createChatCompletionFromJson,
    InferenceService.method.createEmbeddingFromJson,
    InferenceService.method.createResponseFromJson,
    InferenceService.method.createMessageFromJson,
  ].map(rpcName),
);
const DECISION = rpcName(DecisionsService.method.createDecision);
const EMBEDDING = rpcName(InferenceService.method.createEmbeddingFromJson);
const RESPONSES_MESSAGES = new Set(
  [InferenceService.method.createResponseFromJson, InferenceService.method.createMessageFromJson].map(rpcName),
);
const BATCH_SUBMISSION = rpcName(BatchesService.method.createBatchFromJson);

/**
 * Whether a route is of a kind; the plugin's descriptors are not the generated ones, so methods are
 * compared by name.
 */
export function routeIs(kind: RouteKind, route: Route): boolean {
  const rpc = rpcName(route.method);
  switch (kind) {
    case "every":
      return true;
    case "inference":
      return INFERENCE.has(rpc);
    case "provider-call":
      return INFERENCE.has(rpc) || rpc === DECISION;
    case "session":
      return (INFERENCE.has(rpc) && rpc !== EMBEDDING) || rpc === DECISION;
    case "responses-messages":
      return RESPONSES_MESSAGES.has(rpc);
    case "batch-submission":
      return rpc === BATCH_SUBMISSION;
  }
}

/** A route's request headers: header parameters, referring to the document's components. */
export function headerParameters(route: Route): Reference[] {
  return DOCUMENTED_HEADERS.filter((header) => header.on === "request" && routeIs(header.routes, route)).map(
    ({ name }) => ({ $ref: `#/components/parameters/${name}` }),
  );
}

/** The headers of a route's successful answers, referring to the document's components. */
export function successHeaders(route: Route): Record<string, Reference> {
  return references(
    DOCUMENTED_HEADERS.filter(
      (header) => (header.on === "success" || header.on === "every-answer") && routeIs(header.routes, route),
    ),
  );
}

/**
 * The headers of error answers: one shared error response, since every route can answer any
 * error; a header of some routes only says which in its description.
 */
export function errorHeaders(): Record<string, Reference> {
  return references(DOCUMENTED_HEADERS.filter((header) => header.on === "error" || header.on === "every-answer"));
}

/** The components the references point to: each header described once. */
export function headerComponents(): { parameters: Record<string, Parameter>; headers: Record<string, Header> } {
  const parameters: Record<string, Parameter> = {};
  const headers: Record<string, Header> = {};
  for (const { name, on, description, schema } of DOCUMENTED_HEADERS) {
    if (on === "request") parameters[name] = { name, in: "header", description, schema };
    else headers[name] = { description, schema };
  }
  return { parameters, headers };
}

function references(headers: readonly DocumentedHeader[]): Record<string, Reference> {
  return Object.fromEntries(headers.map(({ name }) => [name, { $ref: `#/components/headers/${name}` }]));
}
