import type { DescMessage, JsonObject } from "@bufbuild/protobuf";
import { gatewayError } from "../../../wire/errors.js";
import { type MessagePlan, messagePlan } from "./json-validator-plan.js";
import { readBody } from "./json-validator-read.js";
import { messageViolation, unknownFieldError } from "./json-validator-violations.js";

/** Checks a parsed JSON request body and normalizes it in place; throws a 400 (see compileJsonValidator). */
export type JsonValidator = (body: JsonObject) => void;

const validators = new WeakMap<DescMessage, JsonValidator>();

/**
 * Checks a parsed JSON request body against its message without building the message, and
 * normalizes it in place for forwarding. Throws the 400 the two-step path throws —
 * `assertValid(schema, decodeWireJson(schema, body))` — with the same message and field: decode
 * errors first (the first in key order), then protobuf-es' own JSON reader's (`Invalid request: …`:
 * unpaired surrogates in string fields, nesting past its recursion limit, oneofs set twice, bad
 * base64), then the first `(gateway.v1.rules)` or text/number violation in field order.
 *
 * Normalized: a field given by its lowerCamel JSON name is renamed to its proto name (where both
 * are given, the later non-null value wins, in the place of the first, as decodeWireJson reads
 * them), a field set to `null` is deleted, an integer given as a digit string becomes a number.
 * Enum values stay wire strings; unknown fields stay exactly as they are.
 *
 * One rule is new: unknown fields, at any level of a known message, are forwarded upstream as
 * they are, so they are free-form JSON and pass the same checks as a Struct field (text rule on
 * keys and strings, finite numbers, MAX_JSON_DEPTH), named by their key path
 * (`messages[0].cache_control.type`). They are checked last, so that every body the two-step path
 * refuses gets its answer; the first offending unknown field in document order is reported.
 *
 * How: one pass over the body in key order (json-validator-read.ts) throws decode errors where
 * found, notes protobuf-es' first error, and only notes whether some rule is broken (free-form
 * values are scanned once, recursively, building nothing); a second walk, in field order
 * (json-validator-violations.ts), names the first broken rule only when there is one. Field
 * lookups, rules and patterns are read from the descriptors once, here (json-validator-plan.ts).
 *
 * Differences from the two-step path, where it cannot be matched without building the message:
 * - A `__proto__` key inside free-form JSON (Struct, Value, ListValue) is checked here. protobuf-es
 *   assigns free-form members with `fields[key] = …`, which for `__proto__` sets the prototype, so
 *   the two-step path never sees that member (nor a map field's `__proto__` entry); the body is
 *   forwarded as sent, so its content is checked.
 * - Types the request messages do not use are refused at compile time rather than emulated:
 *   `float` fields, maps with non-string keys, `google.protobuf.NullValue` fields, and lists or
 *   maps of `google.protobuf.*` messages other than Struct, Value, ListValue, Timestamp, Duration
 *   and FieldMask.
 * - Other singular `google.protobuf.*` message fields (wrappers, Any, Empty) are read with
 *   protobuf-es' fromJson on their own, which counts its recursion limit from the field's value
 *   rather than from the request's root.
 *
 * Compiled once per message schema at start-up (cached by schema).
 */
export function compileJsonValidator(schema: DescMessage): JsonValidator {
  let validator = validators.get(schema);
  if (!validator) {
    const plan = messagePlan(schema, new Map());
    validator = (body) => validate(plan, body);
    validators.set(schema, validator);
  }
  return validator;
}

function validate(plan: MessagePlan, body: JsonObject): void {
  const read = readBody(plan, body);
  if (read.readError !== undefined) throw gatewayError(400, read.readError);
  if (read.violated) {
    const violation = messageViolation(plan, body, "");
    if (violation) throw gatewayError(400, violation.message, { field: violation.field });
  }
  if (read.unknown) throw unknownFieldError(read.unknown);
}
