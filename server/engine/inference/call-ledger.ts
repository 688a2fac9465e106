/**
 * A live call's ledger rows: the row of each attempt recorded (a failed one the call moved on
 * from, and the final one), built from the call and the attempt's outcome. The call decides when;
 * the settlement writer writes them behind (server/engine/usage/settlement-writer.ts).
 *
 * @module
 */
import { randomFillSync } from "node:crypto";
import { isFreeEndpoint } from "../catalog/catalog.js";
import { costUsd } from "../money/money.js";
import type { UpstreamUsage } from "../providers/provider.js";
import type { CallRecord } from "../usage/usage-store.js";
import type { CallerContext } from "./caller-context.js";
import type { CallRequest } from "./call-request.js";
import type { Attempt } from "./routing.js";

/** How an attempt ended, as its ledger row says. */
export interface Outcome {
  status: CallRecord["status"];
  httpStatus: number;
  usage: UpstreamUsage;
  latencyMs: number | null;
  generationMs: number | null;
  /** The model the provider says answered (traces), when it says. */
  responseModel?: string;
}

/** What the rows of a call share: who called, which request, and what the content filters said. */
export interface LedgerCall {
  readonly generationId: string;
  /** The id the client was told (wire/request-id.ts). */
  readonly requestId: string | null;
  readonly context: CallerContext;
  readonly request: Pick<CallRequest, "api" | "sessionId" | "streamed">;
  readonly endUser: string | null;
  /** A `flag` content filter matched the input. */
  readonly contentFlagged: boolean;
}

/** An attempt's row; `cacheSavings`: for a cache hit, what the original call cost (the hit itself costs 0). */
export function callRecord(
  call: LedgerCall,
  attempt: Attempt,
  isByok: boolean,
  outcome: Outcome,
  cacheSavings?: string,
): CallRecord {
  const { caller } = call.context;
  const { usage } = outcome;
  return {
    generationId: call.generationId,
    organizationId: caller.organization.id,
    keyHash: caller.key.hash,
    workspaceId: caller.key.workspaceId,
    memberUserId: caller.key.creatorUserId,
    endUser: call.endUser,
    sessionId: call.request.sessionId ?? null,
    requestId: call.requestId,
    api: call.request.api,
    modelId: attempt.model.id,
    providerSlug: attempt.endpoint.providerSlug,
    endpointId: attempt.endpoint.id,
    status: outcome.status,
    httpStatus: outcome.httpStatus,
    streamed: call.request.streamed,
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
    reasoningTokens: usage.reasoningTokens,
    cachedTokens: usage.cachedTokens,
    cacheWriteTokens: usage.cacheWriteTokens ?? 0,
    contentFlagged: call.contentFlagged,
    ...(cacheSavings === undefined ? {} : { cacheHit: true, cacheSavingsUsd: cacheSavings }),
    costUsd: cacheSavings === undefined ? costUsd(attempt.endpoint.pricing, usage) : "0",
    isByok,
    isFree: isFreeEndpoint(attempt.endpoint),
    latencyMs: outcome.latencyMs,
    generationMs: outcome.generationMs,
    reservationId: null,
  };
}

/** No tokens: a failure before any answer, a refusal. */
export const NO_USAGE: UpstreamUsage = { promptTokens: 0, completionTokens: 0, reasoningTokens: 0, cachedTokens: 0 };

/** Random bytes drawn from a pool refilled 256 ids at a time: one system call per 256 calls. */
const ID_BYTES = 20;
const idPool = Buffer.alloc(ID_BYTES * 256);
let idOffset = idPool.length;

/** OpenRouter's form: `gen-<unix seconds>-<20 alphanumerics>`. */
export function generationId(): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  if (idOffset + ID_BYTES > idPool.length) {
    randomFillSync(idPool);
    idOffset = 0;
  }
  let suffix = "";
  for (let i = idOffset; i < idOffset + ID_BYTES; i++) suffix += alphabet[idPool[i]! % alphabet.length];
  idOffset += ID_BYTES;
  return `gen-${Math.floor(Date.now() / 1000)}-${suffix}`;
}
