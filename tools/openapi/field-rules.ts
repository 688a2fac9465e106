import type { DescField } from "@bufbuild/protobuf";
import { rules as rulesOption, type FieldRules } from "../../gen/gateway/v1/options_pb.js";
import { setOptionOf } from "../../wire/proto-options.js";
import type { JsonSchema } from "./openapi-types.js";

/**
 * A field's `(gateway.v1.rules)` as JSON Schema keywords, the rules the validation interceptor
 * (server/platform/rpc/validation.ts) enforces on requests. Lengths count code points in both. On a
 * repeated field the item counts bound the list and every other rule applies to each item.
 */
export function rulesOf(field: DescField): FieldRules | undefined {
  return setOptionOf(field, rulesOption);
}

/** Keywords on one value: a string, a number, or one item of a list. */
export function valueKeywords(rules: FieldRules | undefined, schema: JsonSchema): JsonSchema {
  if (!rules) return schema;
  const out: JsonSchema = { ...schema };
  if (schema.type === "string" && !schema.enum) {
    // A required string must not be empty, which is "not set" for an implicit-presence field.
    const minLength = Math.max(rules.minLen ?? 0, rules.required ? 1 : 0);
    if (minLength > 0) out.minLength = minLength;
    if (rules.maxLen !== undefined) out.maxLength = rules.maxLen;
    if (rules.pattern) out.pattern = rules.pattern;
    if (rules.uuid) out.format = "uuid";
  }
  if (schema.type === "number" || schema.type === "integer") {
    if (rules.gte !== undefined) out.minimum = rules.gte;
    if (rules.lte !== undefined) out.maximum = rules.lte;
    if (rules.gt !== undefined) out.exclusiveMinimum = rules.gt;
  }
  return out;
}

/** Keywords on a list (`minItems`/`maxItems`) or a map (`minProperties`/`maxProperties`). */
export function collectionKeywords(rules: FieldRules | undefined, kind: "list" | "map"): JsonSchema {
  if (!rules) return {};
  // A required list or map must not be empty.
  const min = Math.max(rules.minItems ?? 0, rules.required ? 1 : 0);
  const out: JsonSchema = {};
  if (kind === "list") {
    if (min > 0) out.minItems = min;
    if (rules.maxItems !== undefined) out.maxItems = rules.maxItems;
  } else {
    if (min > 0) out.minProperties = min;
    if (rules.maxItems !== undefined) out.maxProperties = rules.maxItems;
  }
  return out;
}
