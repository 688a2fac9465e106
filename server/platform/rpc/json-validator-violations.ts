/**
 * The compiled JSON validator's messages (json-validator.ts): the first broken rule in field
 * order, walked over the normalized body only once the read found one, and the unknown field's.
 *
 * @module
 */
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { FieldRules } from "../../../gen/gateway/v1/options_pb.js";
import { gatewayError } from "../../../wire/errors.js";
import {
  decodedEmpty,
  type FieldPlan,
  isZero,
  LIST,
  MAP,
  type MessagePlan,
  T,
  type ValuePlan,
} from "./json-validator-plan.js";
import type { UnknownHit } from "./json-validator-read.js";
import { jsonViolation, keySegment, keyViolation, sizeViolation, valueViolation } from "./json-rules.js";

export interface Violation {
  field: string;
  message: string;
}

/** validation.ts' firstViolation over the normalized body. */
export function messageViolation(plan: MessagePlan, object: JsonObject, prefix: string): Violation | undefined {
  for (const field of plan.fields) {
    const name = prefix + field.name;
    const violation = fieldViolation(field, Object.hasOwn(object, field.name) ? object[field.name] : undefined, name);
    if (violation) return typeof violation === "string" ? { field: name, message: violation } : violation;
  }
  return undefined;
}

function fieldViolation(field: FieldPlan, value: JsonValue | undefined, name: string): string | Violation | undefined {
  const rules = field.rules;
  const plan = field.value;
  if (field.kind === LIST) {
    const list = (value ?? []) as JsonValue[];
    const size = sizeViolation("list", list.length, name, rules);
    if (size) return size;
    for (let i = 0; i < list.length; i++) {
      const violation = itemViolation(plan, list[i]!, `${name}[${i}]`, rules);
      if (violation) return violation;
    }
    return undefined;
  }
  if (field.kind === MAP) {
    const map = (value ?? {}) as JsonObject;
    const keys = Object.keys(map);
    const size = sizeViolation("map", keys.length, name, rules);
    if (size) return size;
    for (const key of keys) {
      const badKey = keyViolation(key, name);
      if (badKey) return badKey;
      const violation = itemViolation(plan, map[key]!, name + keySegment(key), undefined);
      if (violation) return violation;
    }
    return undefined;
  }
  if (value === undefined) return rules?.required ? `${name} is required` : undefined;
  switch (plan.type) {
    case T.VALUE:
    case T.STRUCT:
    case T.LIST_VALUE:
      return jsonViolation(value, name);
    case T.MESSAGE:
      return field.rulesSkipped ? undefined : messageViolation(plan.plan!, value as JsonObject, `${name}.`);
    case T.STRING:
    case T.INTEGER:
    case T.DOUBLE:
      if (field.implicit && (plan.type === T.STRING ? value === "" : isZero(plan.type, value)))
        return rules?.required ? `${name} is required` : undefined;
      return valueViolation(value, name, rules);
    case T.BOOL:
      return field.implicit && value === false && rules?.required ? `${name} is required` : undefined;
    case T.BYTES:
      return field.implicit && rules?.required && decodedEmpty(value as string) ? `${name} is required` : undefined;
    default:
      return undefined;
  }
}

/** A list item (with the list's rules) or a map value (with none). */
function itemViolation(
  plan: ValuePlan,
  value: JsonValue,
  name: string,
  rules: FieldRules | undefined,
): string | Violation | undefined {
  switch (plan.type) {
    case T.VALUE:
    case T.STRUCT:
    case T.LIST_VALUE:
      return jsonViolation(value, name);
    case T.MESSAGE:
      return messageViolation(plan.plan!, value as JsonObject, `${name}.`);
    case T.STRING:
    case T.INTEGER:
    case T.DOUBLE:
      return valueViolation(value, name, rules);
    default:
      return undefined;
  }
}

/** The 400 for an unknown field that breaks the free-form rules: its key's, or its value's. */
export function unknownFieldError(hit: UnknownHit): Error {
  const badKey = keyViolation(hit.key, hit.parent || "The request body");
  if (badKey) return gatewayError(400, badKey, hit.parent ? { field: hit.parent } : {});
  const segment = keySegment(hit.key);
  const name = hit.parent ? hit.parent + segment : segment.startsWith(".") ? segment.slice(1) : segment;
  return gatewayError(400, jsonViolation(hit.value, name)!, { field: name });
}
