import { createHash } from "node:crypto";
import { ScalarType, type DescField, type DescMessage, type DescService } from "@bufbuild/protobuf";
import { RouteTable, type Route } from "../../../facade/route-table.js";
import { raw_body_message, rules as rulesOption, type FieldRules } from "../../../gen/gateway/v1/options_pb.js";
import { optionOf, setOptionOf } from "../../../wire/proto-options.js";
import { wireNames } from "../../../wire/enums.js";
import { isFuzzObject, type FuzzJson, type FuzzObject } from "./fuzz-json.js";

/**
 * What the hostile-input suites know about a route, read from its proto alone (the facade's own
 * route table): the path variables, where the request's other fields travel (a JSON body, the
 * query, a multipart upload's query) and the message that describes them, and a baseline request
 * built from the field rules that a mutation then breaks one field at a time.
 */
export type BodyShape =
  | { kind: "none" }
  /** A JSON body; `schema` undefined: free-form (a Struct body). */
  | { kind: "json"; schema: DescMessage | undefined; exclude: ReadonlySet<string> }
  /** A multipart upload: a part named `file`, the metadata message's fields in the query. */
  | { kind: "multipart"; metadata: DescMessage };

export interface RouteShape {
  route: Route;
  label: string;
  /** Index of each variable among the path's segments, and the field it fills. */
  variables: Array<{ index: number; field: DescField | undefined; name: string }>;
  body: BodyShape;
  /** Fields a query parameter fills (everything not in the path or the body). */
  queryFields: DescField[];
}

export interface ShapeContext {
  /** Ids the caller owns, by field name (`workspace_id`). */
  known: Record<string, string>;
  /** A model of the catalog, for fields that name one. */
  model: string;
  /** Makes every generated name unique (unique slugs, names). */
  unique(): number;
  uuid(): string;
}

export function routeShapes(services: readonly DescService[]): RouteShape[] {
  return RouteTable.fromServices(services).routes.map(shapeOf);
}

function shapeOf(route: Route): RouteShape {
  const input = route.method.input;
  const variables = route.segments.flatMap((segment, index) =>
    segment.kind === "variable" ? [{ index, field: fieldAt(input, segment.field), name: segment.field.join(".") }] : [],
  );
  const bound = new Set(variables.map((v) => v.name.split(".")[0]!));
  const label = `${route.verb} ${route.template}`;
  if (input.typeName === "google.api.HttpBody") {
    // A raw JSON body, described by the message `(gateway.v1.raw_body_message)` names; free-form without one.
    return {
      route,
      label,
      variables,
      body: { kind: "json", schema: rawBodyMessageOf(route), exclude: bound },
      queryFields: [],
    };
  }
  if (route.method.methodKind === "client_streaming") {
    const metadata = input.oneofs[0]?.fields.find((f) => f.fieldKind === "message")?.message;
    if (!metadata) throw new Error(`${label}: a client-streaming route without a metadata message`);
    return {
      route,
      label,
      variables,
      body: { kind: "multipart", metadata },
      queryFields: metadata.fields.filter(isQueryable),
    };
  }
  if (route.body === "") {
    return {
      route,
      label,
      variables,
      body: { kind: "none" },
      queryFields: input.fields.filter((f) => !bound.has(f.name) && isQueryable(f)),
    };
  }
  if (route.body === "*")
    return { route, label, variables, body: { kind: "json", schema: input, exclude: bound }, queryFields: [] };
  const field = input.fields.find((f) => f.name === route.body);
  const schema =
    field?.fieldKind === "message" && !field.message.typeName.startsWith("google.protobuf.")
      ? field.message
      : undefined;
  return { route, label, variables, body: { kind: "json", schema, exclude: new Set() }, queryFields: [] };
}

function rawBodyMessageOf(route: Route): DescMessage | undefined {
  const name = optionOf(route.method, raw_body_message);
  return name === "" ? undefined : route.method.parent.file.messages.find((m) => m.typeName === name);
}

function fieldAt(schema: DescMessage, path: string[]): DescField | undefined {
  let current: DescMessage | undefined = schema;
  let field: DescField | undefined;
  for (const name of path) {
    field = current?.fields.find((f) => f.name === name);
    current = field?.fieldKind === "message" ? field.message : undefined;
  }
  return field;
}

/** A query parameter holds text: a scalar, an enum, or a list of them. */
function isQueryable(field: DescField): boolean {
  return (
    field.fieldKind === "scalar" ||
    field.fieldKind === "enum" ||
    (field.fieldKind === "list" && field.listKind !== "message")
  );
}

export function rulesOf(field: DescField): FieldRules | undefined {
  return setOptionOf(field, rulesOption);
}

export function isRequired(field: DescField): boolean {
  const rules = rulesOf(field);
  return Boolean(rules?.required || (rules?.minItems ?? 0) > 0);
}

/** The wire strings of an enum field, first to last. */
export function enumWires(field: DescField): string[] {
  const desc =
    field.fieldKind === "enum"
      ? field.enum
      : (field.fieldKind === "list" || field.fieldKind === "map") && field.enum
        ? field.enum
        : undefined;
  return desc ? wireNames(desc) : [];
}

/**
 * The baseline JSON of a message: its required fields (recursively), plus `model` fields, with
 * values its rules accept. Fields in `exclude` travel in the path.
 */
export function baselineOf(
  schema: DescMessage | undefined,
  ctx: ShapeContext,
  exclude: ReadonlySet<string> = new Set(),
  depth = 0,
): FuzzObject {
  const out: FuzzObject = {};
  if (!schema) return { fuzz: `value-${ctx.unique()}` };
  for (const field of schema.fields) {
    if (exclude.has(field.name) || !(isRequired(field) || field.name === "model")) continue;
    const value = depth < 4 ? fieldValue(field, ctx, depth) : undefined;
    if (value !== undefined) out[field.name] = value;
  }
  return out;
}

/** A value the field's type and rules accept; undefined where none can be made up. */
export function fieldValue(field: DescField, ctx: ShapeContext, depth: number): FuzzJson | undefined {
  const rules = rulesOf(field);
  switch (field.fieldKind) {
    case "scalar":
      return scalarValue(field, field.scalar, rules, ctx);
    case "enum":
      return enumWires(field)[0];
    case "list": {
      const item =
        field.listKind === "message"
          ? messageValue(field.message, ctx, depth)
          : field.listKind === "enum"
            ? enumWires(field)[0]
            : scalarValue(field, field.scalar, rules, ctx);
      return item === undefined ? undefined : [item];
    }
    case "map": {
      const item =
        field.mapKind === "message"
          ? messageValue(field.message, ctx, depth)
          : field.mapKind === "enum"
            ? enumWires(field)[0]
            : scalarValue(field, field.scalar, undefined, ctx);
      return item === undefined ? undefined : { key: item };
    }
    case "message":
      return messageValue(field.message, ctx, depth);
  }
}

function messageValue(schema: DescMessage, ctx: ShapeContext, depth: number): FuzzJson | undefined {
  switch (schema.typeName) {
    case "google.protobuf.Struct":
      return { fuzz: `value-${ctx.unique()}` };
    case "google.protobuf.Value":
      return `fuzz value ${ctx.unique()}`;
    case "google.protobuf.ListValue":
      return [`fuzz value ${ctx.unique()}`];
    case "google.protobuf.Timestamp":
      return "2031-01-02T03:04:05Z";
    case "google.protobuf.Duration":
      return "60s";
    case "google.protobuf.FieldMask":
      return undefined;
    default:
      return baselineOf(schema, ctx, new Set(), depth + 1);
  }
}

function scalarValue(field: DescField, scalar: ScalarType, rules: FieldRules | undefined, ctx: ShapeContext): FuzzJson {
  switch (scalar) {
    case ScalarType.STRING:
      return stringValue(field, rules, ctx);
    case ScalarType.BOOL:
      return false;
    case ScalarType.BYTES:
      return Buffer.from(`fuzz ${ctx.unique()}`).toString("base64");
    default: {
      const low = rules?.gte ?? (rules?.gt !== undefined ? rules.gt + (isInteger(scalar) ? 1 : 0.5) : 1);
      return Math.min(low, rules?.lte ?? low);
    }
  }
}

export function isInteger(scalar: ScalarType): boolean {
  return (
    scalar !== ScalarType.DOUBLE &&
    scalar !== ScalarType.FLOAT &&
    scalar !== ScalarType.STRING &&
    scalar !== ScalarType.BYTES &&
    scalar !== ScalarType.BOOL
  );
}

/** A string the field's rules accept: a known id, a model, or the first candidate that fits. */
export function stringValue(field: DescField, rules: FieldRules | undefined, ctx: ShapeContext): string {
  if (rules?.uuid) return ctx.known[field.name] ?? ctx.uuid();
  const n = ctx.unique();
  const candidates = [
    ...(/(^|_)model($|_)/.test(field.name) ? [ctx.model] : []),
    `fuzz${n}`,
    `fuzz-${n}`,
    `fuzz_${n}`,
    `fuzz${n}@example.com`,
    `https://example.com/fuzz/${n}`,
    `fuzz${n}.example.com`,
    `fuzz/model-${n}`,
    createHash("sha256").update(String(n)).digest("hex"),
    `gen-vid-1700000000-${String(n).padStart(20, "0")}`,
    "1280x720",
    "text",
    "queued",
    `${"A".repeat(43)}${n}`,
  ];
  const fits = (text: string) => {
    const length = [...text].length;
    if (rules?.minLen !== undefined && length < rules.minLen) return false;
    if (rules?.maxLen !== undefined && length > rules.maxLen) return false;
    return !rules?.pattern || new RegExp(rules.pattern, "u").test(text);
  };
  return candidates.find(fits) ?? candidates[1]!;
}

/** Reads a top-level field of a response the way the API nests it: `data.<name>` or `<name>`. */
export function responseField(body: unknown, name: string): unknown {
  if (!isFuzzObject(body as FuzzJson)) return undefined;
  const object = body as Record<string, unknown>;
  const data = object.data;
  if (data !== null && typeof data === "object" && !Array.isArray(data) && name in data)
    return (data as Record<string, unknown>)[name];
  return object[name];
}
