import { ScalarType, type DescField, type DescMessage, type JsonValue, type Message } from "@bufbuild/protobuf";
import { gatewayError } from "../wire/errors.js";
import { decodeWireJson, findField } from "../wire/json-input.js";
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
    // The client never sees the name of the field its body fills.
    const field = findField(schema, route.body);
    const wantsObject = field?.fieldKind === "message" && !["google.protobuf.Value", "google.protobuf.ListValue"].includes(field.message.typeName);
    if (wantsObject && !isObject(input.body)) throw gatewayError(400, "The request body must be a JSON object");
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
  return decodeWireJson(schema, json);
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
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
