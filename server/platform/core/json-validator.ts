import { fromJson, ScalarType, type DescEnum, type DescField, type DescMessage, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { isJsonObject } from "../../../wire/json-body.js";
import { base64Decode } from "@bufbuild/protobuf/wire";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import { rules as rulesOption, type FieldRules } from "../../../gen/gateway/v1/options_pb.js";
import { enumFromWire, wireNames } from "../../../wire/enums.js";
import { gatewayError, errorMessage } from "../../../wire/errors.js";
import { INT_RANGES, normalizeMessageValue } from "../../../wire/json-input.js";
import { setOptionOf } from "../../../wire/proto-options.js";
import { isWellFormed, textProblem } from "../../../wire/text-rules.js";
import { FREE_FORM, JSON_TOO_DEEP, JSON_VIOLATION, jsonViolation, keySegment, keyViolation, scanJson, sizeViolation, valueViolation } from "./json-rules.js";

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
 * How: one pass over the body in key order throws decode errors where found, notes protobuf-es'
 * first error, and only notes whether some rule is broken (free-form values are scanned once,
 * recursively, building nothing); a second walk, in field order, names the first broken rule only
 * when there is one. Field lookups, rules and patterns are read from the descriptors once, here.
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

// ---------------------------------------------------------------------------------------------
// The compiled schema
// ---------------------------------------------------------------------------------------------

/** How one value (a singular field's, a list item, a map value) is read. */
const T = {
  STRING: 0,
  BOOL: 1,
  BYTES: 2,
  DOUBLE: 3,
  INTEGER: 4,
  ENUM: 5,
  /** google.protobuf.Value: any JSON. */
  VALUE: 6,
  STRUCT: 7,
  LIST_VALUE: 8,
  /** Timestamp, Duration, FieldMask: strings decodeWireJson checks itself. */
  WELL_KNOWN: 9,
  /** Any other google.protobuf.* message: decodeWireJson leaves it to protobuf-es. */
  OTHER_GOOGLE: 10,
  MESSAGE: 11,
} as const;

interface ValuePlan {
  type: number;
  /** INTEGER: the range. */
  min: number;
  max: number;
  /** ENUM. */
  enumDesc: DescEnum | undefined;
  /** Message-typed values. */
  message: DescMessage | undefined;
  /** MESSAGE. */
  plan: MessagePlan | undefined;
}

const SINGULAR = 0;
const LIST = 1;
const MAP = 2;

interface FieldPlan {
  field: DescField;
  /** The proto name, under which a normalized body holds the field. */
  name: string;
  /** The JSON name where it differs from the proto name and names this field. */
  alias: string | undefined;
  kind: number;
  value: ValuePlan;
  rules: FieldRules | undefined;
  /** A singular scalar without presence: its zero value means "not set". */
  implicit: boolean;
  /** Index of its oneof in the message, or -1. */
  oneof: number;
  /**
   * A singular message field from a google/ file: the validation interceptor does not look inside
   * (list items it does).
   */
  rulesSkipped: boolean;
}

interface MessagePlan {
  desc: DescMessage;
  /** Fields by proto name and by JSON name, as decodeWireJson's findField resolves them. */
  byKey: Map<string, FieldPlan>;
  /** In declaration order, the validation interceptor's order. */
  fields: FieldPlan[];
  /** Fields whose rules an absent value breaks (required, or a minimum of items). */
  presence: FieldPlan[];
  oneofs: number;
}

function messagePlan(desc: DescMessage, plans: Map<DescMessage, MessagePlan>): MessagePlan {
  const known = plans.get(desc);
  if (known) return known;
  const plan: MessagePlan = { desc, byKey: new Map(), fields: [], presence: [], oneofs: desc.oneofs.length };
  plans.set(desc, plan);
  for (const field of desc.fields) {
    const rules = setOptionOf(field, rulesOption);
    const fieldPlan: FieldPlan = {
      field,
      name: field.name,
      alias: undefined,
      kind: field.fieldKind === "list" ? LIST : field.fieldKind === "map" ? MAP : SINGULAR,
      value: valuePlanOf(field, plans),
      rules,
      implicit: field.fieldKind === "scalar" && !field.oneof && field.presence === FeatureSet_FieldPresence.IMPLICIT,
      oneof: field.oneof ? desc.oneofs.indexOf(field.oneof) : -1,
      rulesSkipped: field.fieldKind === "message" && !FREE_FORM.has(field.message.typeName) && field.message.file.name.startsWith("google/"),
    };
    plan.fields.push(fieldPlan);
    if (!plan.byKey.has(field.name)) plan.byKey.set(field.name, fieldPlan);
    if (!plan.byKey.has(field.jsonName)) plan.byKey.set(field.jsonName, fieldPlan);
    if (rules?.required || (fieldPlan.kind !== SINGULAR && (rules?.minItems ?? 0) > 0)) plan.presence.push(fieldPlan);
  }
  for (const fieldPlan of plan.fields) {
    const { name, jsonName } = fieldPlan.field;
    if (jsonName !== name && plan.byKey.get(jsonName) === fieldPlan && plan.byKey.get(name) === fieldPlan) fieldPlan.alias = jsonName;
  }
  return plan;
}

function valuePlanOf(field: DescField, plans: Map<DescMessage, MessagePlan>): ValuePlan {
  const where = String(field);
  if (field.fieldKind === "map" && field.mapKey !== ScalarType.STRING) throw new Error(`compileJsonValidator: ${where} has non-string map keys`);
  const scalar = field.fieldKind === "scalar" || field.fieldKind === "list" || field.fieldKind === "map" ? field.scalar : undefined;
  const enumDesc = field.fieldKind === "enum" || field.fieldKind === "list" || field.fieldKind === "map" ? field.enum : undefined;
  const message = field.fieldKind === "message" || field.fieldKind === "list" || field.fieldKind === "map" ? field.message : undefined;
  const plan: ValuePlan = { type: T.STRING, min: 0, max: 0, enumDesc, message, plan: undefined };
  if (enumDesc) {
    if (enumDesc.typeName === "google.protobuf.NullValue") throw new Error(`compileJsonValidator: ${where} is a NullValue`);
    plan.type = T.ENUM;
  } else if (message) {
    if (FREE_FORM.has(message.typeName)) {
      plan.type = message.typeName === "google.protobuf.Value" ? T.VALUE : message.typeName === "google.protobuf.Struct" ? T.STRUCT : T.LIST_VALUE;
    } else if (WELL_KNOWN.has(message.typeName)) {
      plan.type = T.WELL_KNOWN;
    } else if (message.typeName.startsWith("google.protobuf.")) {
      if (field.fieldKind !== "message") throw new Error(`compileJsonValidator: ${where} is a list or map of ${message.typeName}`);
      plan.type = T.OTHER_GOOGLE;
    } else {
      plan.type = T.MESSAGE;
      plan.plan = messagePlan(message, plans);
    }
  } else {
    switch (scalar) {
      case ScalarType.STRING:
        plan.type = T.STRING;
        break;
      case ScalarType.BOOL:
        plan.type = T.BOOL;
        break;
      case ScalarType.BYTES:
        plan.type = T.BYTES;
        break;
      case ScalarType.DOUBLE:
        plan.type = T.DOUBLE;
        break;
      case ScalarType.FLOAT:
        throw new Error(`compileJsonValidator: ${where} is a float`);
      default: {
        const [min, max] = INT_RANGES[scalar!] ?? [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER];
        plan.type = T.INTEGER;
        plan.min = min;
        plan.max = max;
      }
    }
  }
  return plan;
}

const WELL_KNOWN = new Set(["google.protobuf.Timestamp", "google.protobuf.Duration", "google.protobuf.FieldMask"]);

// ---------------------------------------------------------------------------------------------
// One validation
// ---------------------------------------------------------------------------------------------

/** protobuf-es' JSON reader's recursion limit (messages and free-form values, from the root). */
const RECURSION_LIMIT = 100;

/** A map key on the path, told apart from a field name. */
class MapKey {
  constructor(readonly key: string) {}
}

/** An unknown field that breaks the free-form rules: reported when nothing else is wrong. */
interface UnknownHit {
  /** The object holding it, named as the validation interceptor names fields ("" for the body). */
  parent: string;
  key: string;
  value: JsonValue;
}

/**
 * The state of the running validation. Validation is synchronous and never re-entered, so one
 * state serves every call and the path costs no allocation.
 */
const state = {
  /** The path of the value being read: field names, list indices, map keys. */
  steps: [] as Array<string | number | MapKey>,
  /** The first error protobuf-es' fromJson would throw, in its reading order. */
  readError: undefined as string | undefined,
  /** Some rule is broken: the exact first one is found by a walk in field order. */
  violated: false,
  /** Inside a message the validation interceptor does not look into. */
  quiet: 0,
  /** A field was given by both of its names (the walk is redone on the normalized body). */
  twice: false,
  unknown: undefined as UnknownHit | undefined,
};

function reset(): void {
  state.steps.length = 0;
  state.readError = undefined;
  state.violated = false;
  state.quiet = 0;
  state.twice = false;
  state.unknown = undefined;
}

function validate(plan: MessagePlan, body: JsonObject): void {
  reset();
  readMessage(plan, body, 1);
  if (state.twice) {
    // The first pass normalized every object, keeping decodeWireJson's order, and found no decode
    // error; the second reads the fields in the order protobuf-es reads them.
    reset();
    readMessage(plan, body, 1);
  }
  if (state.readError !== undefined) throw gatewayError(400, state.readError);
  if (state.violated) {
    const violation = messageViolation(plan, body, "");
    if (violation) throw gatewayError(400, violation.message, { field: violation.field });
  }
  if (state.unknown) throw unknownFieldError(state.unknown);
}

const hasOwn = (object: object, key: string): boolean => Object.hasOwn(object, key);

function flagViolation(): void {
  if (state.quiet === 0) state.violated = true;
}

/** protobuf-es' error, kept when it is the first: it is thrown once no decode error turned up. */
function readError(message: string): void {
  state.readError ??= `Invalid request: ${message}`;
}

function fieldReadError(field: FieldPlan, reason: string): void {
  if (state.readError === undefined) readError(`cannot decode ${String(field.field)} from JSON: ${reason}`);
}

function depthError(what: string): void {
  if (state.readError === undefined) readError(`cannot decode ${what} from JSON: maximum recursion depth of ${RECURSION_LIMIT} reached`);
}

/** decodeWireJson's 400 for the value at the current path (a map value: its key appended). */
function decodeError(problem: string, mapKey?: string): never {
  const name = decodeName(mapKey);
  throw gatewayError(400, `${name} ${problem}`, { field: name });
}

/** The current path as decodeWireJson names it: `messages[0].role`, `logit_bias.some key`. */
function decodeName(mapKey?: string): string {
  let name = "";
  for (const step of state.steps) {
    if (typeof step === "number") name += `[${step}]`;
    else if (typeof step === "string") name += name === "" ? step : `.${step}`;
    else name += `.${step.key}`;
  }
  return mapKey === undefined ? name : `${name}.${mapKey}`;
}

/** The current path as the validation interceptor names it (map keys as keySegment writes them). */
function ruleName(): string {
  let name = "";
  for (const step of state.steps) {
    if (typeof step === "number") name += `[${step}]`;
    else if (typeof step === "string") name += name === "" ? step : `.${step}`;
    else name += keySegment(step.key);
  }
  return name;
}

/**
 * Reads one object of a known message: decode errors are thrown where found (key order, as
 * decodeWireJson meets them); protobuf-es' errors, broken rules and unknown fields are noted.
 * `level` is protobuf-es' recursion depth of this message (1 for the body).
 */
function readMessage(plan: MessagePlan, object: JsonObject, level: number): void {
  if (level > RECURSION_LIMIT) depthError(String(plan.desc));
  let rewrite = false;
  let oneofs: Array<FieldPlan | undefined> | undefined;
  for (const key in object) {
    if (!hasOwn(object, key)) continue;
    const value = object[key]!;
    const field = plan.byKey.get(key);
    if (field === undefined) {
      unknownField(key, value);
      continue;
    }
    if (value === null) {
      rewrite = true;
      continue;
    }
    if (field.alias !== undefined) {
      if (key !== field.name) rewrite = true;
      const other = key === field.name ? field.alias : field.name;
      if (hasOwn(object, other) && object[other] !== null) state.twice = true;
    }
    if (field.oneof >= 0) {
      oneofs ??= new Array<FieldPlan | undefined>(plan.oneofs);
      const first = oneofs[field.oneof];
      if (first && state.readError === undefined) {
        readError(`cannot decode ${String(field.field.oneof)} from JSON: oneof set multiple times by ${first.name} and ${field.name}`);
      }
      oneofs[field.oneof] = first ?? field;
    }
    state.steps.push(field.name);
    if (field.kind === LIST) readList(field, value, level);
    else if (field.kind === MAP) readMap(field, value, level);
    else readSingular(field, object, key, value, level);
    state.steps.pop();
  }
  if (rewrite) normalizeKeys(plan, object);
  for (const field of plan.presence) if (!hasOwn(object, field.name)) flagViolation();
}

function readList(field: FieldPlan, list: JsonValue, level: number): void {
  if (!Array.isArray(list)) decodeError("must be an array");
  const item = field.value;
  for (let i = 0; i < list.length; i++) {
    const value = list[i]!;
    state.steps.push(i);
    if (value === null) decodeError("must not be null");
    const normalized = readValue(field, item, value, level);
    state.steps.pop();
    if (normalized !== value) list[i] = normalized;
    if (item.type === T.STRING) {
      if (!isWellFormed(normalized as string)) fieldReadError(field, `list item #${i + 1}: expected string: invalid UTF8`);
      if (valueViolation(normalized, "", field.rules)) flagViolation();
    } else if ((item.type === T.INTEGER || item.type === T.DOUBLE) && field.rules && valueViolation(normalized, "", field.rules)) {
      flagViolation();
    }
  }
  if (field.rules && sizeViolation("list", list.length, "", field.rules)) flagViolation();
}

function readMap(field: FieldPlan, map: JsonValue, level: number): void {
  if (!isJsonObject(map)) decodeError("must be an object");
  const item = field.value;
  let size = 0;
  for (const key in map) {
    if (!hasOwn(map, key)) continue;
    size++;
    const value = map[key]!;
    const normalized = readValue(field, item, value, level, key);
    if (normalized !== value) map[key] = normalized;
    // protobuf-es reads the value, then checks the key, then the value's type.
    if (!isWellFormed(key)) fieldReadError(field, "invalid map key: expected string: invalid UTF8");
    if (item.type === T.STRING && !isWellFormed(normalized as string)) fieldReadError(field, `map entry ${formatKey(key)}: expected string: invalid UTF8`);
    if (textProblem(key) !== undefined) flagViolation();
    if ((item.type === T.STRING || item.type === T.DOUBLE || item.type === T.INTEGER) && valueViolation(normalized, "", undefined)) flagViolation();
  }
  if (field.rules && sizeViolation("map", size, "", field.rules)) flagViolation();
}

function readSingular(field: FieldPlan, object: JsonObject, key: string, value: JsonValue, level: number): void {
  const type = field.value.type;
  if (field.rulesSkipped) state.quiet++;
  const normalized = readValue(field, field.value, value, level);
  if (field.rulesSkipped) state.quiet--;
  if (normalized !== value) object[key] = normalized;
  const rules = field.rules;
  switch (type) {
    case T.STRING:
      if (!isWellFormed(normalized as string)) fieldReadError(field, "expected string: invalid UTF8");
      if (field.implicit && normalized === "") {
        if (rules?.required) flagViolation();
      } else if (valueViolation(normalized, "", rules)) flagViolation();
      return;
    case T.INTEGER:
    case T.DOUBLE:
      if (field.implicit && isZero(type, normalized)) {
        if (rules?.required) flagViolation();
      } else if (rules && valueViolation(normalized, "", rules)) flagViolation();
      return;
    case T.BOOL:
      if (field.implicit && normalized === false && rules?.required) flagViolation();
      return;
    case T.BYTES:
      if (field.implicit && rules?.required && decodedEmpty(normalized as string)) flagViolation();
      return;
  }
}

/**
 * One value checked as decodeWireJson checks it (a decode error is thrown), read as protobuf-es
 * reads it (its first error is noted), and normalized: the value to keep in the body.
 */
function readValue(field: FieldPlan, plan: ValuePlan, value: JsonValue, level: number, mapKey?: string): JsonValue {
  switch (plan.type) {
    case T.STRING:
      if (typeof value !== "string") decodeError("must be a string", mapKey);
      return value;
    case T.BOOL:
      if (typeof value !== "boolean") decodeError("must be a boolean", mapKey);
      return value;
    case T.BYTES:
      if (typeof value !== "string") decodeError("must be a base64 string", mapKey);
      if (value !== "" && state.readError === undefined) {
        try {
          base64Decode(value);
        } catch (error) {
          fieldReadError(field, errorMessage(error));
        }
      }
      return value;
    case T.DOUBLE:
      if (typeof value !== "number" || !Number.isFinite(value)) decodeError("must be a number", mapKey);
      return value;
    case T.INTEGER: {
      const number = typeof value === "string" && DIGITS.test(value) ? Number(value) : value;
      if (typeof number !== "number" || !Number.isInteger(number)) decodeError("must be an integer", mapKey);
      if (number < plan.min || number > plan.max) decodeError(`must be an integer from ${plan.min} to ${plan.max}`, mapKey);
      return number;
    }
    case T.ENUM:
      if (typeof value !== "string" || enumFromWire(plan.enumDesc!, value) === undefined) {
        decodeError(`must be one of: ${wireNames(plan.enumDesc!).join(", ")}`, mapKey);
      }
      return value;
    case T.VALUE:
      readFreeForm(plan, value, level);
      return value;
    case T.STRUCT:
      if (!isJsonObject(value)) decodeError("must be an object", mapKey);
      readFreeForm(plan, value, level);
      return value;
    case T.LIST_VALUE:
      if (!Array.isArray(value)) decodeError("must be an array", mapKey);
      readFreeForm(plan, value, level);
      return value;
    case T.WELL_KNOWN:
      normalizeMessageValue(plan.message!, value, decodeName(mapKey));
      if (level + 1 > RECURSION_LIMIT) depthError(String(plan.message));
      return value;
    case T.OTHER_GOOGLE:
      if (level + 1 > RECURSION_LIMIT) depthError(String(plan.message));
      if (state.readError === undefined) {
        try {
          fromJson(plan.message!, value, { ignoreUnknownFields: true });
        } catch (error) {
          readError(errorMessage(error));
        }
      }
      return value;
    default:
      if (!isJsonObject(value)) decodeError("must be an object", mapKey);
      if (mapKey !== undefined) state.steps.push(new MapKey(mapKey));
      readMessage(plan.plan!, value, level + 1);
      if (mapKey !== undefined) state.steps.pop();
      return value;
  }
}

const DIGITS = /^-?\d+$/;

/**
 * A free-form value of a field of a message at `level`: protobuf-es reads the Struct, Value or
 * ListValue message one level down, a Value's own JSON one more, and every member or item one
 * more again.
 */
function readFreeForm(plan: ValuePlan, value: JsonValue, level: number): void {
  if (level + 1 > RECURSION_LIMIT) depthError(String(plan.message));
  const limit = plan.type === T.VALUE ? RECURSION_LIMIT - level - 2 : RECURSION_LIMIT - level - 1;
  const found = scanJson(value, 0, limit);
  if (found & JSON_TOO_DEEP) depthError("google.protobuf.Value");
  if (found & JSON_VIOLATION) flagViolation();
}

function unknownField(key: string, value: JsonValue): void {
  if (state.unknown !== undefined) return;
  if (textProblem(key) === undefined && !(scanJson(value, 0, Infinity) & JSON_VIOLATION)) return;
  state.unknown = { parent: ruleName(), key, value };
}

function unknownFieldError(hit: UnknownHit): Error {
  const badKey = keyViolation(hit.key, hit.parent || "The request body");
  if (badKey) return gatewayError(400, badKey, hit.parent ? { field: hit.parent } : {});
  const segment = keySegment(hit.key);
  const name = hit.parent ? hit.parent + segment : segment.startsWith(".") ? segment.slice(1) : segment;
  return gatewayError(400, jsonViolation(hit.value, name)!, { field: name });
}

function isZero(type: number, value: JsonValue): boolean {
  // -0 is a double's value (protobuf-es sets it) but an integer's zero.
  return type === T.DOUBLE ? Object.is(value, 0) : value === 0;
}

/** Bytes without content: not set. Malformed base64 has already failed protobuf-es' read. */
function decodedEmpty(value: string): boolean {
  if (value === "") return true;
  try {
    return base64Decode(value).length === 0;
  } catch {
    return false;
  }
}

/** protobuf-es' formatVal for a string. */
function formatKey(key: string): string {
  return key.length > 30 ? "string" : `"${key.split('"').join('\\"')}"`;
}

/**
 * decodeWireJson's result order in place: proto names in the place of the first non-null value,
 * the last non-null value kept, nulls gone; unknown fields keep their place.
 */
function normalizeKeys(plan: MessagePlan, object: JsonObject): void {
  const keys = Object.keys(object);
  const entries: Array<[string, JsonValue]> = [];
  const places = new Map<string, number>();
  for (const key of keys) {
    const value = object[key]!;
    const field = plan.byKey.get(key);
    if (field === undefined) {
      entries.push([key, value]);
      continue;
    }
    if (value === null) continue;
    const place = places.get(field.name);
    if (place === undefined) {
      places.set(field.name, entries.length);
      entries.push([field.name, value]);
    } else {
      entries[place]![1] = value;
    }
  }
  for (const key of keys) delete object[key];
  // defineProperty, as an unknown key may be `__proto__`.
  for (const [key, value] of entries) Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
}

// ---------------------------------------------------------------------------------------------
// The first broken rule, in field order (only once the read found one)
// ---------------------------------------------------------------------------------------------

interface Violation {
  field: string;
  message: string;
}

/** validation.ts' firstViolation over the normalized body. */
function messageViolation(plan: MessagePlan, object: JsonObject, prefix: string): Violation | undefined {
  for (const field of plan.fields) {
    const name = prefix + field.name;
    const violation = fieldViolation(field, hasOwn(object, field.name) ? object[field.name] : undefined, name);
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
      if (field.implicit && (plan.type === T.STRING ? value === "" : isZero(plan.type, value))) return rules?.required ? `${name} is required` : undefined;
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
function itemViolation(plan: ValuePlan, value: JsonValue, name: string, rules: FieldRules | undefined): string | Violation | undefined {
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
