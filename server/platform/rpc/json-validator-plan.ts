/**
 * The compiled JSON validator's plan of a message schema (json-validator.ts): every field's lookup
 * keys, kind, value type and rules, read from the descriptors once at start-up.
 *
 * @module
 */
import { type DescEnum, type DescField, type DescMessage, type JsonValue, ScalarType } from "@bufbuild/protobuf";
import { base64Decode } from "@bufbuild/protobuf/wire";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import { type FieldRules, rules as rulesOption } from "../../../gen/gateway/v1/options_pb.js";
import { INT_RANGES } from "../../../wire/json-input.js";
import { setOptionOf } from "../../../wire/proto-options.js";
import { FREE_FORM } from "./json-rules.js";

/** How one value (a singular field's, a list item, a map value) is read. */
export const T = {
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

export interface ValuePlan {
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

export const SINGULAR = 0;
export const LIST = 1;
export const MAP = 2;

export interface FieldPlan {
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

export interface MessagePlan {
  desc: DescMessage;
  /** Fields by proto name and by JSON name, as decodeWireJson's findField resolves them. */
  byKey: Map<string, FieldPlan>;
  /** In declaration order, the validation interceptor's order. */
  fields: FieldPlan[];
  /** Fields whose rules an absent value breaks (required, or a minimum of items). */
  presence: FieldPlan[];
  oneofs: number;
}

export function messagePlan(desc: DescMessage, plans: Map<DescMessage, MessagePlan>): MessagePlan {
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
      rulesSkipped:
        field.fieldKind === "message" &&
        !FREE_FORM.has(field.message.typeName) &&
        field.message.file.name.startsWith("google/"),
    };
    plan.fields.push(fieldPlan);
    if (!plan.byKey.has(field.name)) plan.byKey.set(field.name, fieldPlan);
    if (!plan.byKey.has(field.jsonName)) plan.byKey.set(field.jsonName, fieldPlan);
    if (rules?.required || (fieldPlan.kind !== SINGULAR && (rules?.minItems ?? 0) > 0)) plan.presence.push(fieldPlan);
  }
  for (const fieldPlan of plan.fields) {
    const { name, jsonName } = fieldPlan.field;
    if (jsonName !== name && plan.byKey.get(jsonName) === fieldPlan && plan.byKey.get(name) === fieldPlan)
      fieldPlan.alias = jsonName;
  }
  return plan;
}

function valuePlanOf(field: DescField, plans: Map<DescMessage, MessagePlan>): ValuePlan {
  const where = String(field);
  if (field.fieldKind === "map" && field.mapKey !== ScalarType.STRING)
    throw new Error(`compileJsonValidator: ${where} has non-string map keys`);
  const scalar =
    field.fieldKind === "scalar" || field.fieldKind === "list" || field.fieldKind === "map" ? field.scalar : undefined;
  const enumDesc =
    field.fieldKind === "enum" || field.fieldKind === "list" || field.fieldKind === "map" ? field.enum : undefined;
  const message =
    field.fieldKind === "message" || field.fieldKind === "list" || field.fieldKind === "map"
      ? field.message
      : undefined;
  const plan: ValuePlan = { type: T.STRING, min: 0, max: 0, enumDesc, message, plan: undefined };
  if (enumDesc) {
    if (enumDesc.typeName === "google.protobuf.NullValue")
      throw new Error(`compileJsonValidator: ${where} is a NullValue`);
    plan.type = T.ENUM;
  } else if (message) {
    if (FREE_FORM.has(message.typeName)) {
      plan.type =
        message.typeName === "google.protobuf.Value"
          ? T.VALUE
          : message.typeName === "google.protobuf.Struct"
            ? T.STRUCT
            : T.LIST_VALUE;
    } else if (WELL_KNOWN.has(message.typeName)) {
      plan.type = T.WELL_KNOWN;
    } else if (message.typeName.startsWith("google.protobuf.")) {
      if (field.fieldKind !== "message")
        throw new Error(`compileJsonValidator: ${where} is a list or map of ${message.typeName}`);
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

/** A number field's zero value: not set, where its presence is implicit. */
export function isZero(type: number, value: JsonValue): boolean {
  // -0 is a double's value (protobuf-es sets it) but an integer's zero.
  return type === T.DOUBLE ? Object.is(value, 0) : value === 0;
}

/** Bytes without content: not set. Malformed base64 has already failed protobuf-es' read. */
export function decodedEmpty(value: string): boolean {
  if (value === "") return true;
  try {
    return base64Decode(value).length === 0;
  } catch {
    return false;
  }
}
