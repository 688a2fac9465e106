import type { JsonObject } from "@bufbuild/protobuf";
import type { ApplyingGuardrail } from "../governance/applying-guardrails.js";
import type { ContentFilter } from "./content-filter.js";
import { budgetedFilters } from "./filter-budget.js";
import { filterRequest, type FilterRefusal, type ScannedShape } from "./request-content.js";

/** What the content filters did to one call. */
export interface CallFiltering {
  /** Filters that matched, the blocking one included: counted by slug and action. */
  matched: readonly ContentFilter[];
  /** Why the call is refused (blockedError), if it is: the filter, and what it could not filter. */
  blockedBy?: FilterRefusal;
}

const UNFILTERED: CallFiltering = { matched: [] };

/**
 * Runs the content filters of every guardrail that governs a call over the bodies it will send
 * (one per upstream request: a decision sends one per question), rewriting them in place: every
 * string of every body, keys included (request-strings.ts). A call whose guardrails have no filter
 * (nearly all) returns at once, having walked nothing.
 */
export function filterCall(
  guardrails: readonly ApplyingGuardrail[],
  shape: ScannedShape,
  bodies: readonly JsonObject[],
  maxBytes: number,
): CallFiltering {
  if (!guardrails.some((guardrail) => guardrail.contentFilters.length > 0)) return UNFILTERED;
  const governing = guardrails.flatMap((guardrail) => guardrail.contentFilters);
  // Each filter reads at most maxBytes of this call's text (GATEWAY_CONTENT_FILTER_MAX_BYTES): 413 beyond.
  const filters = budgetedFilters(governing, maxBytes);
  const unusable = filters.find((filter) => filter.unusable !== undefined);
  if (unusable !== undefined) return { matched: [unusable], blockedBy: { filter: unusable } };
  const matched = new Set<ContentFilter>();
  for (const body of bodies) {
    const { blockedBy } = filterRequest(filters, shape, body, matched);
    if (blockedBy !== undefined) return { matched: [...matched], blockedBy };
  }
  return matched.size === 0 ? UNFILTERED : { matched: [...matched] };
}
