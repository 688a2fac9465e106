import { ScalarType, type DescField, type DescMessage, type JsonValue, type Message } from "@bufbuild/protobuf";
import { isJsonObject } from "../wire/json-body.js";
import { gatewayError } from "../wire/errors.js";
import { decodeWireJson, findField } from "../wire/json-input.js";
import { resolvePath, type PathStep } from "./field-paths.js";
import type { Route } from "./route-table.js";

/**
 * Builds an RPC's request message from a REST request, as grpc-gateway does: the JSON body (per
 * the rule's `body`), then path variables, then query parameters for fields still unset. Values
 * are checked against the schema first so that a wrong type is a 400 naming the field; unknown
 * fields are ignored; JSON `null` means "not set"; enums are the API's strings. PATCH bodies get
 * `update_mask` filled from the keys they carry, so "omitted" and "null" can be told apart. The
 * fields a route addresses were resolved when it was compiled (route-table.ts).
 */
export interface RestInput {
  body: unknown;
  /** The path variables' values, in the order of the route's template. */
  values: readonly string[];
  query: URLSearchParams;
}

type JsonObject = { [key: string]: JsonValue };

export function decodeRequest(route: Route, input: RestInput): Message {
  const schema = route.method.input;
  const json: JsonObject = {};
  if (route.body === "*") {
    if (!isJsonObject(input.body)) throw gatewayError(400, "The request body must be a JSON object");
    Object.assign(json, input.body);
    if (route.updateMask)
      addUpdateMask(
        schema,
        route.updateMask,
        json,
        input.body,
        route.variableFields.map((path) => path[0]!.field),
      );
  } else if (route.bodyField && input.body !== undefined) {
    // The client never sees the name of the field its body fills.
    const field = route.bodyField;
    const wantsObject =
      field.fieldKind === "message" &&
      !["google.protobuf.Value", "google.protobuf.ListValue"].includes(field.message.typeName);
    if (wantsObject && !isJsonObject(input.body)) throw gatewayError(400, "The request body must be a JSON object");
    json[route.body] = input.body as JsonValue;
  }
  for (const [key, values] of groupQuery(input.query)) {
    const path = queryPath(route, key);
    if (!path || getAt(json, path) !== undefined) continue;
    const field = path.at(-1)!.field;
    const value =
      field.fieldKind === "list"
        ? values.map((v) => fromText(field, v, `query parameter '${key}'`))
        : fromText(field, values.at(-1)!, `query parameter '${key}'`);
    setAt(json, path, value);
  }
  route.variableFields.forEach((path, index) => {
    setAt(
      json,
      path,
      fromText(path.at(-1)!.field, input.values[index]!, `path parameter '${path.map((step) => step.key).join(".")}'`),
    );
  });
  return decodeWireJson(schema, json);
}

/** Query keys a route has seen, resolved once each (null: not a field); bounded, as keys are the client's. */
const queryPaths = new WeakMap<Route, Map<string, PathStep[] | null>>();
const QUERY_KEYS_KEPT = 256;

function queryPath(route: Route, key: string): PathStep[] | undefined {
  let known = queryPaths.get(route);
  if (!known) queryPaths.set(route, (known = new Map()));
  let path = known.get(key);
  if (path === undefined) {
    path = resolvePath(route.method.input, key.split(".")) ?? null;
    if (known.size < QUERY_KEYS_KEPT) known.set(key, path);
  }
  return path ?? undefined;
}

function addUpdateMask(
  schema: DescMessage,
  mask: DescField,
  json: JsonObject,
  body: JsonObject,
  addressing: DescField[],
): void {
  if ("update_mask" in body || "updateMask" in body) return;
  const present = Object.keys(body)
    .map((key) => findField(schema, key))
    .filter((f): f is DescField => f !== undefined && f !== mask && !addressing.includes(f));
  json.update_mask = present.map((f) => f.jsonName).join(",");
}

function groupQuery(query: URLSearchParams): Map<string, string[]> {
  const grouped = new Map<string, string[]>();
  for (const [key, value] of query) grouped.set(key, [...(grouped.get(key) ?? []), value]);
  return grouped;
}

function getAt(json: JsonObject, path: PathStep[]): JsonValue | undefined {
  let node: JsonValue | undefined = json;
  for (const { field } of path) {
    if (!isJsonObject(node)) return undefined;
    node = node[field.name] ?? node[field.jsonName];
  }
  return node;
}

function setAt(json: JsonObject, path: PathStep[], value: JsonValue): void {
  let node = json;
  for (const { field } of path.slice(0, -1)) {
    const existing = node[field.name] ?? node[field.jsonName];
    const next: JsonObject = isJsonObject(existing) ? existing : {};
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
  const scalar =
    field.fieldKind === "scalar" || (field.fieldKind === "list" && field.listKind === "scalar")
      ? field.scalar
      : undefined;
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
