import {
  fromJson,
  ScalarType,
  type DescEnum,
  type DescField,
  type DescMessage,
  type JsonObject,
  type JsonValue,
  type MessageShape,
} from "@bufbuild/protobuf";
import { isJsonObject } from "./json-body.js";
import { gatewayError, errorMessage } from "./errors.js";
import { enumFromWire, wireNames } from "./enums.js";

/**
 * A request message from the API's JSON (docs/api/conventions.md), the inverse of wire-json.ts: proto or
 * lowerCamel field names, enums as their wire strings, integers as numbers or digit strings, JSON
 * `null` as "not set", unknown fields ignored. Values are checked against the schema first so that a
 * wrong type is a 400 naming the field. The REST facade decodes bodies with it; the core uses it
 * for requests it builds from JSON itself (a Responses or Messages body translated to chat).
 */
export function decodeWireJson<Desc extends DescMessage>(schema: Desc, json: JsonObject): MessageShape<Desc> {
  const normalized = normalizeMessage(schema, json, "");
  try {
    return fromJson(schema, normalized, { ignoreUnknownFields: true });
  } catch (err) {
    throw gatewayError(400, `Invalid request: ${errorMessage(err)}`);
  }
}

export function findField(schema: DescMessage, key: string): DescField | undefined {
  return schema.fields.find((f) => f.name === key || f.jsonName === key);
}

/** The JSON numbers each integer type takes (64-bit ones: those a JSON number holds exactly). */
export const INT_RANGES: Partial<Record<ScalarType, [number, number]>> = {
  [ScalarType.INT32]: [-2147483648, 2147483647],
  [ScalarType.SINT32]: [-2147483648, 2147483647],
  [ScalarType.SFIXED32]: [-2147483648, 2147483647],
  [ScalarType.UINT32]: [0, 4294967295],
  [ScalarType.FIXED32]: [0, 4294967295],
  [ScalarType.INT64]: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  [ScalarType.SINT64]: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  [ScalarType.SFIXED64]: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  [ScalarType.UINT64]: [0, Number.MAX_SAFE_INTEGER],
  [ScalarType.FIXED64]: [0, Number.MAX_SAFE_INTEGER],
};

function normalizeMessage(schema: DescMessage, json: JsonObject, prefix: string): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(json)) {
    const field = findField(schema, key);
    if (!field || value === null) continue;
    const name = prefix + field.name;
    switch (field.fieldKind) {
      case "list":
        if (!Array.isArray(value)) throw gatewayError(400, `${name} must be an array`, { field: name });
        out[field.name] = value.map((item, i) => {
          if (item === null) throw gatewayError(400, `${name}[${i}] must not be null`, { field: `${name}[${i}]` });
          return normalizeValue(
            field.listKind === "message"
              ? { message: field.message }
              : field.listKind === "enum"
                ? { enum: field.enum }
                : { scalar: field.scalar },
            item,
            `${name}[${i}]`,
          );
        });
        break;
      case "map":
        if (!isJsonObject(value)) throw gatewayError(400, `${name} must be an object`, { field: name });
        out[field.name] = Object.fromEntries(
          Object.entries(value).map(([k, v]) => [
            k,
            normalizeValue(
              field.mapKind === "message"
                ? { message: field.message }
                : field.mapKind === "enum"
                  ? { enum: field.enum }
                  : { scalar: field.scalar },
              v,
              `${name}.${k}`,
            ),
          ]),
        );
        break;
      case "message":
        out[field.name] = normalizeValue({ message: field.message }, value, name);
        break;
      case "enum":
        out[field.name] = normalizeValue({ enum: field.enum }, value, name);
        break;
      case "scalar":
        out[field.name] = normalizeValue({ scalar: field.scalar }, value, name);
        break;
    }
  }
  return out;
}

type Kind = { scalar: ScalarType } | { enum: DescEnum } | { message: DescMessage };

function normalizeValue(kind: Kind, value: JsonValue, name: string): JsonValue {
  if ("enum" in kind) {
    if (kind.enum.typeName === "google.protobuf.NullValue") return value;
    const number = typeof value === "string" ? enumFromWire(kind.enum, value) : undefined;
    if (number === undefined)
      throw gatewayError(400, `${name} must be one of: ${wireNames(kind.enum).join(", ")}`, { field: name });
    return number;
  }
  if ("message" in kind) return normalizeMessageValue(kind.message, value, name);
  switch (kind.scalar) {
    case ScalarType.STRING:
      // What a string may contain is the validation interceptor's rule (text-rules.ts), for every
      // caller alike.
      if (typeof value !== "string") throw gatewayError(400, `${name} must be a string`, { field: name });
      return value;
    case ScalarType.BOOL:
      if (typeof value !== "boolean") throw gatewayError(400, `${name} must be a boolean`, { field: name });
      return value;
    case ScalarType.BYTES:
      if (typeof value !== "string") throw gatewayError(400, `${name} must be a base64 string`, { field: name });
      return value;
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      if (typeof value !== "number" || !Number.isFinite(value))
        throw gatewayError(400, `${name} must be a number`, { field: name });
      return value;
    default: {
      const number = typeof value === "string" && /^-?\d+$/.test(value) ? Number(value) : value;
      const [min, max] = INT_RANGES[kind.scalar] ?? [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER];
      if (typeof number !== "number" || !Number.isInteger(number))
        throw gatewayError(400, `${name} must be an integer`, { field: name });
      if (number < min || number > max)
        throw gatewayError(400, `${name} must be an integer from ${min} to ${max}`, { field: name });
      return number;
    }
  }
}

/** A message-typed value's check; a gateway message's fields are normalized into a copy. */
export function normalizeMessageValue(schema: DescMessage, value: JsonValue, name: string): JsonValue {
  switch (schema.typeName) {
    case "google.protobuf.Value":
      return value;
    case "google.protobuf.Struct":
      if (!isJsonObject(value)) throw gatewayError(400, `${name} must be an object`, { field: name });
      return value;
    case "google.protobuf.ListValue":
      if (!Array.isArray(value)) throw gatewayError(400, `${name} must be an array`, { field: name });
      return value;
    case "google.protobuf.Timestamp":
    case "google.protobuf.Duration":
    case "google.protobuf.FieldMask":
      if (typeof value !== "string") throw gatewayError(400, `${name} must be a string`, { field: name });
      try {
        fromJson(schema, value);
      } catch {
        throw gatewayError(
          400,
          schema.typeName === "google.protobuf.Timestamp"
            ? `${name} must be an ISO 8601 UTC timestamp such as 2030-12-31T23:59:59Z`
            : `${name} is malformed`,
          { field: name },
        );
      }
      return value;
    default:
      if (schema.typeName.startsWith("google.protobuf.")) return value;
      if (!isJsonObject(value)) throw gatewayError(400, `${name} must be an object`, { field: name });
      return normalizeMessage(schema, value, `${name}.`);
  }
}
