import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { StoredContentFilterBuiltin } from "../../platform/db/governance-models.js";
import { builtinFilter, customFilter, unusableFilter, type ContentFilter } from "./content-filter.js";
import { errorMessage } from "../../../wire/errors.js";
import { AnalysisBudget } from "./pattern-cost.js";

const NONE: readonly ContentFilter[] = [];

/** Compiled filters by guardrail id, with the stored columns they were compiled from. */
const compiled = new Map<string, { version: string; filters: readonly ContentFilter[] }>();

/**
 * A guardrail's content filters, compiled once per version of its two columns: the governance
 * cache reloads a key's guardrails often, and compiling each pattern and checking its cost
 * (pattern-limits.ts) are the expensive part. A guardrail
 * without filters costs nothing here and nothing per call.
 */
export function guardrailFilters(
  id: string,
  name: string,
  builtins: StoredContentFilterBuiltin[],
  custom: JsonObject[] | null,
): readonly ContentFilter[] {
  if (builtins.length === 0 && (custom === null || custom.length === 0)) {
    compiled.delete(id);
    return NONE;
  }
  const version = JSON.stringify([name, builtins, custom]);
  const cached = compiled.get(id);
  if (cached?.version === version) return cached.filters;
  const budget = new AnalysisBudget();
  const filters = [
    ...builtins.map((builtin) => compiledOrUnusable(name, builtin.slug, () => builtinFilter(name, builtin))),
    ...(custom ?? []).map((filter, index) =>
      compiledOrUnusable(
        name,
        `content_filters[${index}]`,
        () => customFilter(name, filter, index, budget),
        filter.pattern,
      ),
    ),
  ];
  compiled.set(id, { version, filters });
  return filters;
}

/**
 * The reason an unusable filter's calls are refused with is shown to every caller of the key: it
 * never quotes a custom filter's pattern (a refusal of RE2 quotes it), which is the guardrail's
 * own business; saving the guardrail again gives its administrator the whole reason.
 */
function compiledOrUnusable(
  guardrail: string,
  name: string,
  compile: () => ContentFilter,
  pattern?: JsonValue,
): ContentFilter {
  try {
    return compile();
  } catch (err) {
    const reason = errorMessage(err);
    const quotesPattern = typeof pattern === "string" && pattern !== "" && reason.includes(pattern);
    return unusableFilter(
      guardrail,
      name,
      quotesPattern ? `${name}.pattern is not one this gateway accepts; saving the guardrail again says why` : reason,
    );
  }
}
