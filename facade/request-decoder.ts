import { fromJson, ScalarType, type DescEnum, type DescField, type DescMessage, type JsonValue, type Message } from "@bufbuild/protobuf";
import { gatewayError } from "../server/core/errors.js";
import { isWellFormed } from "../server/core/text-rules.js";
import { enumFromWire, wireNames } from "../server/core/wire-enums.js";
import type { Route } from "./route-table.js";

/**
 * Builds an RPC's request message from a REST request, as grpc-gateway does: the JSON body (per
 * the rule's `body`), then path variables, then query parameters for fields still unset. Values
 * are checked against the schema first so that a wrong type is a 400 naming the field; unknown
 * fields are ignored; JSON `null` means "not set"; enums are the spec's strings. PATCH bodies get
 * `update_mask` filled from the keys they carry, so "omitted" and "null" can be told apart.
 */
export interface RestInput {
  body: unknown;
  variables: Array<[string[], string]>;
  query: URLSearchParams;
}

type JsonObject = { [key: string]: JsonValue };

export function decodeRequest(route: Route, input: RestInput): Message {
  const schema = route.method.input;
  const json: JsonObject = {};
  if (route.body === "*") {
    if (!isObject(input.body)) throw gatewayError(400, "The request body must be a JSON object");
    Object.assign(json, input.body);
    addUpdateMask(schema, json, input.body, input.variables.map(([path]) => path[0]!));
  } else if (route.body !== "" && input.body !== undefined) {
    json[route.body] = input.body as JsonValue;
  }
  for (const [key, values] of groupQuery(input.query)) {
    const path = resolvePath(schema, key.split("."));
    if (!path || getAt(json, path) !== undefined) continue;
    const field = path.at(-1)!.field;
    const value = field.fieldKind === "list" ? values.map((v) => fromText(field, v, `query parameter '${key}'`)) : fromText(field, values.at(-1)!, `query parameter '${key}'`);
    setAt(json, path, value);
  }
  for (const [fieldPath, raw] of input.variables) {
    const path = resolvePath(schema, fieldPath);
    if (!path) throw new Error(`${route.template}: no field ${fieldPath.join(".")} in ${schema.typeName}`);
    setAt(json, path, fromText(path.at(-1)!.field, raw, `path parameter '${fieldPath.join(".")}'`));
  }
  const normalized = normalizeMessage(schema, json, "");
  try {
    return fromJson(schema, normalized, { ignoreUnknownFields: true });
  } catch (err) {
    throw gatewayError(400, `Invalid request: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function findField(schema: DescMessage, key: string): DescField | undefined {
  return schema.fields.find((f) => f.name === key || f.jsonName === key);
}

function addUpdateMask(schema: DescMessage, json: JsonObject, body: JsonObject, addressing: string[]): void {
  const mask = findField(schema, "update_mask");
  if (mask?.fieldKind !== "message" || mask.message.typeName !== "google.protobuf.FieldMask" || "update_mask" in body || "updateMask" in body) return;
  const present = Object.keys(body)
    .map((key) => findField(schema, key))
    .filter((f): f is DescField => f !== undefined && f !== mask && !addressing.includes(f.name));
  json.update_mask = present.map((f) => f.jsonName).join(",");
}

function groupQuery(query: URLSearchParams): Map<string, string[]> {
  const grouped = new Map<string, string[]>();
  for (const [key, value] of query) grouped.set(key, [...(grouped.get(key) ?? []), value]);
  return grouped;
}

type PathStep = { key: string; field: DescField };

/** Resolves a dotted field path (proto or JSON names) through singular message fields. */
function resolvePath(schema: DescMessage, names: string[]): PathStep[] | undefined {
  const steps: PathStep[] = [];
  let current: DescMessage | undefined = schema;
  for (const name of names) {
    const field: DescField | undefined = current && findField(current, name);
    if (!field) return undefined;
    steps.push({ key: field.name, field });
    current = field.fieldKind === "message" && !field.message.typeName.startsWith("google.protobuf.") ? field.message : undefined;
  }
  return steps;
}

function getAt(json: JsonObject, path: PathStep[]): JsonValue | undefined {
  let node: JsonValue | undefined = json;
  for (const { field } of path) {
    if (!isObject(node)) return undefined;
    node = node[field.name] ?? node[field.jsonName];
  }
  return node;
}

function setAt(json: JsonObject, path: PathStep[], value: JsonValue): void {
  let node = json;
  for (const { field } of path.slice(0, -1)) {
    const existing = node[field.name] ?? node[field.jsonName];
    const next: JsonObject = isObject(existing) ? existing : {};
    delete node[field.jsonName];
    node[field.name] = next;
    node = next;
  }
  const last = path.at(-1)!.field;
  delete node[last.jsonName];
  node[last.name] = value;
}

/** Path and query values are text; give them the JSON type their field expects. */
function fromText(field: DescField, raw: string, what: string): JsonValue {
  const scalar = field.fieldKind === "scalar" || (field.fieldKind === "list" && field.listKind === "scalar") ? field.scalar : undefined;
  if (scalar === undefined || scalar === ScalarType.STRING || scalar === ScalarType.BYTES) return raw;
  if (scalar === ScalarType.BOOL) {
    if (raw === "true" || raw === "1") return true;
    if (raw === "false" || raw === "0") return false;
    throw gatewayError(400, `${what} must be true or false`);
  }
  if (scalar === ScalarType.DOUBLE || scalar === ScalarType.FLOAT) {
    const number = raw.trim() === "" ? NaN : Number(raw);
    if (!Number.isFinite(number)) throw gatewayError(400, `${what} must be a number`);
    return number;
  }
  if (!/^-?\d+$/.test(raw)) throw gatewayError(400, `${what} must be an integer`);
  return Number(raw);
}

const INT_RANGES: Partial<Record<ScalarType, [number, number]>> = {
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
        if (!Array.isArray(value)) throw gatewayError(400, `${name} must be an array`);
        out[field.name] = value.map((item, i) => {
          if (item === null) throw gatewayError(400, `${name}[${i}] must not be null`);
          return normalizeValue(field.listKind === "message" ? { message: field.message } : field.listKind === "enum" ? { enum: field.enum } : { scalar: field.scalar }, item, `${name}[${i}]`);
        });
        break;
      case "map":
        if (!isObject(value)) throw gatewayError(400, `${name} must be an object`);
        out[field.name] = Object.fromEntries(
          Object.entries(value).map(([k, v]) => [k, normalizeValue(field.mapKind === "message" ? { message: field.message } : field.mapKind === "enum" ? { enum: field.enum } : { scalar: field.scalar }, v, `${name}.${k}`)]),
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
    if (number === undefined) throw gatewayError(400, `${name} must be one of: ${wireNames(kind.enum).join(", ")}`);
    return number;
  }
  if ("message" in kind) return normalizeMessageValue(kind.message, value, name);
  switch (kind.scalar) {
    case ScalarType.STRING:
      if (typeof value !== "string") throw gatewayError(400, `${name} must be a string`);
      if (!isWellFormed(value)) throw gatewayError(400, `${name} must be well-formed Unicode`);
      return value;
    case ScalarType.BOOL:
      if (typeof value !== "boolean") throw gatewayError(400, `${name} must be a boolean`);
      return value;
    case ScalarType.BYTES:
      if (typeof value !== "string") throw gatewayError(400, `${name} must be a base64 string`);
      return value;
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      if (typeof value !== "number" || !Number.isFinite(value)) throw gatewayError(400, `${name} must be a number`);
      return value;
    default: {
      const number = typeof value === "string" && /^-?\d+$/.test(value) ? Number(value) : value;
      const [min, max] = INT_RANGES[kind.scalar] ?? [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER];
      if (typeof number !== "number" || !Number.isInteger(number)) throw gatewayError(400, `${name} must be an integer`);
      if (number < min || number > max) throw gatewayError(400, `${name} must be an integer from ${min} to ${max}`);
      return number;
    }
  }
}

function normalizeMessageValue(schema: DescMessage, value: JsonValue, name: string): JsonValue {
  switch (schema.typeName) {
    case "google.protobuf.Value":
      return value;
    case "google.protobuf.Struct":
      if (!isObject(value)) throw gatewayError(400, `${name} must be an object`);
      return value;
    case "google.protobuf.ListValue":
      if (!Array.isArray(value)) throw gatewayError(400, `${name} must be an array`);
      return value;
    case "google.protobuf.Timestamp":
    case "google.protobuf.Duration":
    case "google.protobuf.FieldMask":
      if (typeof value !== "string") throw gatewayError(400, `${name} must be a string`);
      try {
        fromJson(schema, value);
      } catch {
        throw gatewayError(400, schema.typeName === "google.protobuf.Timestamp" ? `${name} must be an ISO 8601 UTC timestamp such as 2030-12-31T23:59:59Z` : `${name} is malformed`);
      }
      return value;
    default:
      if (schema.typeName.startsWith("google.protobuf.")) return value;
      if (!isObject(value)) throw gatewayError(400, `${name} must be an object`);
      return normalizeMessage(schema, value, `${name}.`);
  }
}
