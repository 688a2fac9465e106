import type { JsonValue } from "@bufbuild/protobuf";

/**
 * Narrowing helpers for provider JSON, whose shape is only ever a claim until checked; the object
 * test is the wire's one.
 */
export { isJsonObject as isObject } from "../../../wire/json-body.js";

export function stringOr(value: JsonValue | undefined, fallback: string): string {
  return typeof value === "string" ? value : fallback;
}

/** A token count: a finite non-negative number, else 0 (providers omit fields they do not count). */
export function tokenCount(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.trunc(value) : 0;
}
