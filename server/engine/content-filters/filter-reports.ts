import type { EngineParts } from "../engine.js";
import type { CallFiltering } from "./call-filters.js";

/** Counts the filters that matched a call's input, by slug and action (the metrics' labels). */
export function countFiltering(deps: Pick<EngineParts, "observers">, { matched }: CallFiltering): void {
  for (const filter of matched) deps.observers?.inference?.contentFiltered(filter.slug, filter.action);
}

/**
 * One line per flag filter that matched, naming the guardrail and the filter (never the text):
 * the call went through, and this line and its ids are how an operator finds it.
 */
export function logFlags(
  deps: Pick<EngineParts, "log">,
  { matched }: CallFiltering,
  ids: { requestId: string | null; generationId: string },
): void {
  for (const filter of matched) {
    if (filter.action === "flag")
      deps.log.warn({ ...ids, guardrail: filter.guardrail, filter: filter.name }, "content filter flagged the input");
  }
}
