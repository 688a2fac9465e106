import { toJson, ScalarType, type DescField, type DescMessage, type JsonValue, type Message } from "@bufbuild/protobuf";
import { reflect, type ReflectMessage } from "@bufbuild/protobuf/reflect";
import { FeatureSet_FieldPresence, timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { envelope, nullable, omit_empty } from "../gen/gateway/v1/options_pb.js";
import { optionOf } from "./proto-options.js";
import { wireName } from "./enums.js";

/**
 * The API's JSON of a message (docs/api/conventions.md): proto field names, every non-optional field
 * present (empty lists as []), integers as numbers even when 64-bit, enums as their wire strings,
 * timestamps as ISO 8601 with milliseconds, fields marked `(gateway.v1.nullable)` as null when
 * unset, and lists marked `(gateway.v1.omit_empty)` left out when empty. An `(gateway.v1.envelope)`
 * message is rendered as its set oneof member alone.
 *
 * `compact` renders only what is set (no empty lists or maps, no zero-valued implicit scalars, no
 * nulls): the form a request is forwarded upstream in, since providers refuse e.g. `"tools": []`.
 */
export interface WireJsonOptions {
  compact?: boolean;
}

export function wireJson(schema: DescMessage, message: Message, options: WireJsonOptions = {}): JsonValue {
  return encodeMessage(reflect(schema, message), options.compact ?? false);
}

const IMPLICIT = FeatureSet_FieldPresence.IMPLICIT;

export function setMember(message: ReflectMessage): DescField | undefined {
  const [oneof] = message.oneofs;
  return oneof && message.oneofCase(oneof);
}

function encodeMessage(message: ReflectMessage, compact: boolean): JsonValue {
  const schema = message.desc;
  if (schema.typeName.startsWith("google.protobuf.")) return encodeWellKnown(message);
  if (optionOf(schema, envelope)) {
    const member = setMember(message);
    return member ? (encodeField(message, member, compact) ?? null) : null;
  }
  const out: { [key: string]: JsonValue } = {};
  for (const field of message.fields) {
    const value = encodeField(message, field, compact);
    if (value !== undefined && !(compact && value === null)) out[field.name] = value;
  }
  return out;
}

function encodeField(message: ReflectMessage, field: DescField, compact: boolean): JsonValue | undefined {
  const isNullable = optionOf(field, nullable);
  if (compact && !message.isSet(field)) return undefined;
  switch (field.fieldKind) {
    case "list": {
      const list = message.get(field);
      if (list.size === 0 && isNullable) return null;
      if (list.size === 0 && optionOf(field, omit_empty)) return undefined;
      const items: JsonValue[] = [];
      for (const item of list) {
        items.push(
          field.listKind === "message"
            ? encodeMessage(item as ReflectMessage, compact)
            : field.listKind === "enum"
              ? encodeEnum(field, item as number)
              : encodeScalar(field.scalar, item),
        );
      }
      return items;
    }
    case "map": {
      const out: { [key: string]: JsonValue } = {};
      for (const [key, value] of message.get(field)) {
        out[String(key)] =
          field.mapKind === "message"
            ? encodeMessage(value as ReflectMessage, compact)
            : field.mapKind === "enum"
              ? encodeEnum(field, value as number)
              : encodeScalar(field.scalar, value);
      }
      return out;
    }
    case "message":
      if (!message.isSet(field)) return isNullable ? null : undefined;
      return encodeMessage(message.get(field), compact);
    case "enum": {
      const value = message.get(field);
      // The zero value means "not set" and has no wire string.
      if (value === 0) return isNullable ? null : undefined;
      return encodeEnum(field, value);
    }
    case "scalar":
      // Implicit-presence scalars are always shown; explicit ones (proto3 `optional`) only when set.
      if (field.presence !== IMPLICIT && !message.isSet(field)) return isNullable ? null : undefined;
      return encodeScalar(field.scalar, message.get(field));
  }
}

function encodeEnum(field: DescField, value: number): JsonValue {
  const desc = field.enum!;
  return wireName(desc, value) ?? desc.value[value]?.name ?? value;
}

function encodeScalar(type: ScalarType, value: unknown): JsonValue {
  switch (type) {
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return Number(value);
    case ScalarType.BYTES:
      return Buffer.from(value as Uint8Array).toString("base64");
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return Number.isFinite(value) ? (value as number) : null;
    default:
      return value as JsonValue;
  }
}

function encodeWellKnown(message: ReflectMessage): JsonValue {
  if (message.desc.typeName === "google.protobuf.Timestamp") {
    return timestampDate(message.message as Timestamp).toISOString();
  }
  return toJson(message.desc, message.message);
}
