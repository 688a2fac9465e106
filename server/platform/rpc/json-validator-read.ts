/**
 * The compiled JSON validator's read of a body (json-validator.ts): one pass in key order that
 * throws decodeWireJson's errors where found, notes protobuf-es' first error, whether some rule is
 * broken and the first offending unknown field, and normalizes the body in place.
 *
 * @module
 */
import { fromJson, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { base64Decode } from "@bufbuild/protobuf/wire";
import { enumFromWire, wireNames } from "../../../wire/enums.js";
import { errorMessage, gatewayError } from "../../../wire/errors.js";
import { normalizeMessageValue } from "../../../wire/json-input.js";
import { isJsonObject } from "../../../wire/json-body.js";
import { isWellFormed, textProblem } from "../../../wire/text-rules.js";
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
import { JSON_TOO_DEEP, JSON_VIOLATION, keySegment, scanJson, sizeViolation, valueViolation } from "./json-rules.js";

/** protobuf-es' JSON reader's recursion limit (messages and free-form values, from the root). */
const RECURSION_LIMIT = 100;

/** A map key on the path, told apart from a field name. */
class MapKey {
  constructor(readonly key: string) {}
}

/** An unknown field that breaks the free-form rules: reported when nothing else is wrong. */
export interface UnknownHit {
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

/** What one read found, for compileJsonValidator to throw. */
export interface BodyRead {
  /** protobuf-es' first error. */
  readonly readError: string | undefined;
  /** Some rule is broken: the exact first one is found by a walk in field order. */
  readonly violated: boolean;
  readonly unknown: UnknownHit | undefined;
}

/**
 * Reads the body, throwing the first decode error, and normalizes it in place. The answer is the
 * shared state, valid until the next read.
 */
export function readBody(plan: MessagePlan, body: JsonObject): BodyRead {
  reset();
  readMessage(plan, body, 1);
  if (state.twice) {
    // The first pass normalized every object, keeping decodeWireJson's order, and found no decode
    // error; the second reads the fields in the order protobuf-es reads them.
    reset();
    readMessage(plan, body, 1);
  }
  return state;
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
  if (state.readError === undefined)
    readError(`cannot decode ${what} from JSON: maximum recursion depth of ${RECURSION_LIMIT} reached`);
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
        readError(
          `cannot decode ${String(field.field.oneof)} from JSON: ` +
            `oneof set multiple times by ${first.name} and ${field.name}`,
        );
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
      if (!isWellFormed(normalized as string))
        fieldReadError(field, `list item #${i + 1}: expected string: invalid UTF8`);
      if (valueViolation(normalized, "", field.rules)) flagViolation();
    } else if (
      (item.type === T.INTEGER || item.type === T.DOUBLE) &&
      field.rules &&
      valueViolation(normalized, "", field.rules)
    ) {
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
    if (item.type === T.STRING && !isWellFormed(normalized as string))
      fieldReadError(field, `map entry ${formatKey(key)}: expected string: invalid UTF8`);
    if (textProblem(key) !== undefined) flagViolation();
    if (
      (item.type === T.STRING || item.type === T.DOUBLE || item.type === T.INTEGER) &&
      valueViolation(normalized, "", undefined)
    )
      flagViolation();
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
      if (number < plan.min || number > plan.max)
        decodeError(`must be an integer from ${plan.min} to ${plan.max}`, mapKey);
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
  for (const [key, value] of entries)
    Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
}
