import type { DescMessage } from "@bufbuild/protobuf";
import { PART_FILLED_FIELDS, uploadFieldsOf } from "../../facade/multipart-upload.js";
import type { Route } from "../../facade/route-table.js";
import type { JsonSchema, Parameter } from "./openapi-types.js";
import type { MessageSchemas } from "./schemas.js";

/**
 * The path and query parameters of a route, as facade/request-decoder.ts fills the request from
 * them: path variables by the template; query parameters for the request's fields that neither
 * the path nor the body fills (none when the body is `*`), nested messages by dotted names
 * (`provider.sort`), repeated fields by repeating the key. A multipart upload takes its metadata
 * fields from the query (facade/multipart-upload.ts); a raw body upload takes none.
 */
export function pathParameters(route: Route, schemas: MessageSchemas): Parameter[] {
  const names = route.segments.flatMap((segment) => (segment.kind === "variable" ? [segment.field.join(".")] : []));
  return route.variableFields.map((path, index) => {
    const { schema } = schemas.field(path.at(-1)!.field, "request");
    return parameter(names[index]!, "path", true, schema);
  });
}

export function queryParameters(route: Route, schemas: MessageSchemas): Parameter[] {
  const { method } = route;
  if (method.methodKind === "client_streaming") {
    if (method.input.typeName === "google.api.HttpBody") return [];
    const { metadata } = uploadFieldsOf(method.input);
    return metadata.fieldKind === "message"
      ? flatten(metadata.message, "", new Set(PART_FILLED_FIELDS), schemas, new Set())
      : [];
  }
  if (route.body === "*") return [];
  const filled = new Set(route.variableFields.map((path) => path.map((step) => step.key).join(".")));
  if (route.bodyField) filled.add(route.bodyField.name);
  return flatten(method.input, "", filled, schemas, new Set());
}

/** Query-expressible fields: scalars, enums, lists of them, timestamps, and nested messages' fields. */
function flatten(
  message: DescMessage,
  prefix: string,
  filled: ReadonlySet<string>,
  schemas: MessageSchemas,
  enclosing: ReadonlySet<string>,
): Parameter[] {
  const out: Parameter[] = [];
  // A message that contains itself would flatten forever.
  const trail = new Set([...enclosing, message.typeName]);
  for (const field of message.fields) {
    const name = prefix + field.name;
    if (filled.has(name)) continue;
    const expressible =
      field.fieldKind === "scalar" ||
      field.fieldKind === "enum" ||
      (field.fieldKind === "list" && field.listKind !== "message") ||
      (field.fieldKind === "message" && QUERY_WELL_KNOWN.has(field.message.typeName));
    if (expressible) {
      const { schema, present } = schemas.field(field, "request");
      out.push(parameter(name, "query", present, schema));
    } else if (
      field.fieldKind === "message" &&
      !field.message.typeName.startsWith("google.") &&
      !trail.has(field.message.typeName)
    ) {
      out.push(...flatten(field.message, `${name}.`, filled, schemas, trail));
    }
    // Maps, lists of messages and free-form JSON cannot be written as query parameters.
  }
  return out;
}

/** Well-known types whose JSON is a string, which a query value can carry. */
const QUERY_WELL_KNOWN = new Set(["google.protobuf.Timestamp", "google.protobuf.Duration"]);

function parameter(name: string, where: "path" | "query", required: boolean, schema: JsonSchema): Parameter {
  const { description, ...rest } = schema;
  return {
    name,
    in: where,
    ...(required ? { required } : {}),
    ...(description === undefined ? {} : { description }),
    schema: rest,
  };
}
