import type { LimitName } from "../admission/quantities.js";
import type { EngineParts } from "../engine.js";
import type { CallRecord } from "../usage/usage-store.js";
import type { CallerContext } from "./caller-context.js";
import type { InferenceApi } from "./routing.js";

/** What the ledger row of a refused call says of it: the call as it was asked. */
export interface RefusedCall {
  generationId: string;
  requestId: string | null;
  api: InferenceApi;
  /** The model the route would have tried first. */
  modelId: string;
  endUser: string | null;
  sessionId: string | null;
  streamed: boolean;
}

/**
 * A call admission refused with 429 becomes a ledger row of its own — status `error`, HTTP 429, no
 * provider, no tokens, no cost, `rate_limit` naming the limit — so analytics can group 429s by
 * limit (its `rate_limit` dimension) and the usage log shows them. Written behind like every row,
 * and only while settlement has room: under a flood of refused calls these rows give way to the
 * calls that were admitted; the metrics count every refusal all the same.
 */
export function recordRefusal(
  deps: Pick<EngineParts, "settlement">,
  context: CallerContext,
  call: RefusedCall,
  limit: LimitName,
): void {
  if (!deps.settlement.hasRoom(1)) return;
  const { caller } = context;
  const record: CallRecord = {
    generationId: call.generationId,
    organizationId: caller.organization.id,
    keyHash: caller.key.hash,
    workspaceId: caller.key.workspaceId,
    memberUserId: caller.key.creatorUserId,
    endUser: call.endUser,
    sessionId: call.sessionId,
    requestId: call.requestId,
    api: call.api,
    modelId: call.modelId,
    providerSlug: null,
    endpointId: null,
    status: "error",
    httpStatus: 429,
    streamed: call.streamed,
    promptTokens: 0,
    completionTokens: 0,
    reasoningTokens: 0,
    cachedTokens: 0,
    costUsd: "0",
    isByok: false,
    isFree: false,
    latencyMs: null,
    generationMs: null,
    reservationId: null,
    rateLimit: limit,
  };
  deps.settlement.enqueue(record);
}
