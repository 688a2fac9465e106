import type { JsonObject } from "@bufbuild/protobuf";
import type { ConnectError } from "@connectrpc/connect";
import { blockedError, countFiltering, filterCall, isContentTooLarge, logFlags } from "../../engine/index.js";
import type { Deps } from "../deps.js";
import type { BatchPlan } from "./batch-plan.js";
import { filterTurn } from "./filter-turns.js";

type FilteredItem = { request: JsonObject } | { refusal: ConnectError };

/**
 * A batch item's request as the provider will get it: its body in the pipeline's shape with the
 * content filters of the batch key's guardrails applied, as on the live route; or, when a block
 * filter matches or the item's text is more than a filter reads for one call, the live route's
 * refusal (the item's result: never sent, not billed).
 */
export function filteredItem(deps: Deps, plan: BatchPlan, item: { itemId: string; body: JsonObject }): FilteredItem {
  const request = plan.format.toPipeline(item.body);
  let filtering: ReturnType<typeof filterCall>;
  try {
    filtering = filterCall(plan.context.guardrails, plan.format.api, [request], deps.config.contentFilterMaxBytes);
  } catch (err) {
    if (isContentTooLarge(err)) return { refusal: err };
    throw err;
  }
  if (filtering.matched.length === 0) return { request };
  countFiltering(deps.engine, filtering);
  if (filtering.blockedBy !== undefined) return { refusal: blockedError(filtering.blockedBy) };
  logFlags(deps, filtering, { requestId: null, generationId: item.itemId });
  return { request };
}

/**
 * The same, in a turn of the event loop of its own when the batch has content filters
 * (filter-turns.ts): the items of a batch are filtered one per turn, other calls served between.
 */
export async function filteredItemInTurn(
  deps: Deps,
  plan: BatchPlan,
  item: { itemId: string; body: JsonObject },
): Promise<FilteredItem> {
  if (plan.context.guardrails.some((guardrail) => guardrail.contentFilters.length > 0)) await filterTurn();
  return filteredItem(deps, plan, item);
}
