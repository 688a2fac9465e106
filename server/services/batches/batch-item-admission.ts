import type { JsonObject } from "@bufbuild/protobuf";
import type { ConnectError } from "@connectrpc/connect";
import {
  estimatePromptTokens,
  isFinalRefusal,
  isFreeEndpoint,
  isRateWindow,
  quantitiesFor,
  refusedLimit,
  worstCaseTokens,
} from "../../engine/index.js";
import type { AdmissionTicket } from "../../engine/admission/lease-book.js";
import type { Deps } from "../deps.js";
import type { BatchPlan } from "./batch-plan.js";

/**
 * A batch item is admitted like a live call against the rate limits its key and its workspace set
 * — their requests and tokens per minute (`svc_rate_limit`) — from this instance's leases. Not
 * against the gateway's default limit, which the submission counted once (the batch is one request
 * of the API there), nor its budget, which the submission reserved for every item. An item that
 * finds a window used up waits for the next one (`wait`: put back without spending a try), so a
 * batch is paced by its limits instead of failing its items; one whose worst case alone passes a
 * token limit is refused for good. The ticket is settled apart (LeaseBook.settleApart) with the
 * tokens the item used, since its ledger row is written with its result.
 */
export type ItemAdmission =
  | { kind: "admitted"; ticket: AdmissionTicket | null }
  | { kind: "wait"; delayMs: number }
  | { kind: "refused"; error: ConnectError };

export async function admitItem(deps: Deps, plan: BatchPlan, body: JsonObject): Promise<ItemAdmission> {
  const endpoints = plan.attempts.map((a) => a.endpoint);
  const quantities = quantitiesFor(plan.context, deps.config, endpoints.every(isFreeEndpoint), new Date()).filter(
    (q) => isRateWindow(q) && q.rateLimit !== "gateway_requests",
  );
  if (quantities.length === 0) return { kind: "admitted", ticket: null };
  const tokens = worstCaseTokens(
    endpoints,
    estimatePromptTokens(plan.format.promptParts(body)),
    plan.format.maxOutputTokens(body),
  );
  try {
    return { kind: "admitted", ticket: await deps.engine.leases.admit(quantities, "0", tokens) };
  } catch (err) {
    if (refusedLimit(err) === undefined) throw err;
    const error = err as ConnectError;
    if (isFinalRefusal(error)) return { kind: "refused", error };
    // Retry-After is the window's end, in whole seconds.
    return { kind: "wait", delayMs: Math.max(1, Number(error.metadata.get("retry-after") ?? 1)) * 1000 };
  }
}
