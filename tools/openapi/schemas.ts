import { ScalarType, type DescEnum, type DescField, type DescMessage } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import { envelope, nullable, omit_empty } from "../../gen/gateway/v1/options_pb.js";
import { wireName, wireNames } from "../../wire/enums.js";
import { optionOf } from "../../wire/proto-options.js";
import { commentOf } from "./comments.js";
import { collectionKeywords, rulesOf, valueKeywords } from "./field-rules.js";
import type { JsonSchema } from "./openapi-types.js";

/**
 * JSON Schemas of messages as the facade's JSON rules write and read them: responses as
 * wire/json.ts renders them, requests as wire/json-input.ts and the validation interceptor take
 * them. The two differ, so a message has a schema per direction:
 * - responses: proto field names; `required` lists what is always present (implicit-presence
 *   scalars, lists and maps, and every `(gateway.v1.nullable)` field, which is null when unset);
 *   lists marked `(gateway.v1.omit_empty)` may be absent; an `(gateway.v1.envelope)` message is
 *   its set member alone;
 * - requests: `required` and the other keywords come from `(gateway.v1.rules)`.
 * Enums are their `(gateway.v1.wire)` strings, 64-bit integers JSON numbers, timestamps ISO 8601
 * strings, Struct and Value free-form JSON.
 *
 * A message is a component named after its type; one used in both directions gets two,
 * `<type>-Input` and `<type>-Output`, as FastAPI names them. Which messages are used in which
 * direction is known from the roots given at construction, before any name is handed out.
 */
export type Direction = "request" | "response";

type Kind = { scalar: ScalarType } | { enum: DescEnum } | { message: DescMessage };

const IMPLICIT = FeatureSet_FieldPresence.IMPLICIT;

/** The well-known types the protos use, as their JSON (Timestamp as the facade renders it). */
const WELL_KNOWN: Record<string, JsonSchema> = {
  "google.protobuf.Timestamp": { type: "string", format: "date-time" },
  "google.protobuf.Duration": { type: "string", pattern: "^-?[0-9]+(\\.[0-9]+)?s$" },
  "google.protobuf.FieldMask": { type: "string" },
  "google.protobuf.Struct": { type: "object", additionalProperties: {} },
  "google.protobuf.Value": {},
  "google.protobuf.ListValue": { type: "array" },
  "google.protobuf.Empty": { type: "object" },
};

export class MessageSchemas {
  private readonly components = new Map<string, JsonSchema>();
  private readonly directions = new Map<string, Set<Direction>>();

  constructor(roots: ReadonlyArray<readonly [DescMessage, Direction]>) {
    for (const [message, direction] of roots) this.record(message, direction);
  }

  /** The schema of a message: a reference to its component (built on first use), or a well-known type's. */
  ref(message: DescMessage, direction: Direction): JsonSchema {
    const known = wellKnown(message);
    if (known) return known;
    const name = this.nameOf(message, direction);
    if (!this.components.has(name)) {
      // Set before it is built: a message may refer to itself.
      this.components.set(name, {});
      this.components.set(name, this.objectSchema(message, direction));
    }
    return { $ref: `#/components/schemas/${name}` };
  }

  /**
   * A request body made of a message's fields less those the path fills (and the update mask the
   * facade fills from the body's keys); with `clearable`, every optional field also takes null
   * (a PATCH body, where null clears). Inline, since it is not the message's own schema.
   */
  body(message: DescMessage, options: { exclude: ReadonlySet<DescField>; clearable: boolean }): JsonSchema {
    if (options.exclude.size === 0 && !options.clearable) return this.ref(message, "request");
    return this.objectSchema(message, "request", options);
  }

  /** One field's schema in a direction, and whether it is always present (responses) or required (requests). */
  field(field: DescField, direction: Direction): { schema: JsonSchema; present: boolean } {
    const { schema, present } = direction === "response" ? this.responseField(field) : this.requestField(field);
    return { schema: described(schema, commentOf(field)), present };
  }

  /** The schema of one element of a field: a scalar, an enum or a message. */
  kind(kind: Kind, direction: Direction): JsonSchema {
    if ("scalar" in kind) return scalarSchema(kind.scalar);
    if ("enum" in kind)
      return { type: "string", enum: direction === "response" ? renderedNames(kind.enum) : wireNames(kind.enum) };
    return this.ref(kind.message, direction);
  }

  /** Every component built, by name. */
  all(): Record<string, JsonSchema> {
    return Object.fromEntries([...this.components].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  private record(message: DescMessage, direction: Direction): void {
    if (wellKnown(message)) return;
    let seen = this.directions.get(message.typeName);
    if (!seen) this.directions.set(message.typeName, (seen = new Set()));
    if (seen.has(direction)) return;
    seen.add(direction);
    for (const field of message.fields) {
      const kind = kindOf(field);
      if ("message" in kind) this.record(kind.message, direction);
    }
  }

  private nameOf(message: DescMessage, direction: Direction): string {
    const both = this.directions.get(message.typeName)?.size === 2;
    return both ? `${message.typeName}-${direction === "request" ? "Input" : "Output"}` : message.typeName;
  }

  private objectSchema(
    message: DescMessage,
    direction: Direction,
    body?: { exclude: ReadonlySet<DescField>; clearable: boolean },
  ): JsonSchema {
    const description = commentOf(message);
    if (direction === "response" && optionOf(message, envelope)) {
      // anyOf, not oneOf: free-form members (a Struct) would match beside any other.
      return described({ anyOf: message.fields.map((field) => this.field(field, direction).schema) }, description);
    }
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const field of message.fields) {
      if (body?.exclude.has(field)) continue;
      const { schema, present } = this.field(field, direction);
      properties[field.name] = body?.clearable && !present ? orNull(schema) : schema;
      if (present) required.push(field.name);
    }
    return described({ type: "object", properties, ...(required.length > 0 ? { required } : {}) }, description);
  }

  /** As wire/json.ts's encodeField renders it. */
  private responseField(field: DescField): { schema: JsonSchema; present: boolean } {
    const isNullable = optionOf(field, nullable);
    switch (field.fieldKind) {
      case "list": {
        const schema: JsonSchema = { type: "array", items: this.kind(kindOf(field), "response") };
        if (isNullable) return { schema: orNull(schema), present: true };
        return { schema, present: !optionOf(field, omit_empty) };
      }
      case "map":
        return {
          schema: { type: "object", additionalProperties: this.kind(kindOf(field), "response") },
          present: true,
        };
      case "scalar": {
        // Implicit-presence scalars are always written; explicit ones when set, or as null.
        const schema = this.kind(kindOf(field), "response");
        if (field.presence === IMPLICIT) return { schema, present: true };
        return { schema: isNullable ? orNull(schema) : schema, present: isNullable };
      }
      default: {
        // Messages when set, enums when not the zero value; else null or absent.
        const schema = this.kind(kindOf(field), "response");
        return { schema: isNullable ? orNull(schema) : schema, present: isNullable };
      }
    }
  }

  /** As wire/json-input.ts reads it and the validation interceptor checks it. */
  private requestField(field: DescField): { schema: JsonSchema; present: boolean } {
    const rules = rulesOf(field);
    const item = valueKeywords(rules, this.kind(kindOf(field), "request"));
    const present = rules?.required ?? false;
    switch (field.fieldKind) {
      case "list":
        return { schema: { type: "array", items: item, ...collectionKeywords(rules, "list") }, present };
      case "map":
        return {
          schema: {
            type: "object",
            additionalProperties: this.kind(kindOf(field), "request"),
            ...collectionKeywords(rules, "map"),
          },
          present,
        };
      default:
        return { schema: item, present };
    }
  }
}

/** What one element of a field holds. */
export function kindOf(field: DescField): Kind {
  switch (field.fieldKind) {
    case "scalar":
      return { scalar: field.scalar };
    case "enum":
      return { enum: field.enum };
    case "message":
      return { message: field.message };
    case "list":
      return field.listKind === "scalar"
        ? { scalar: field.scalar }
        : field.listKind === "enum"
          ? { enum: field.enum }
          : { message: field.message };
    case "map":
      return field.mapKind === "scalar"
        ? { scalar: field.scalar }
        : field.mapKind === "enum"
          ? { enum: field.enum }
          : { message: field.message };
  }
}

/** The same schema that also admits JSON null. */
export function orNull(schema: JsonSchema): JsonSchema {
  if (schema.type === undefined) {
    // {} (free-form JSON) admits null already.
    if (schema.$ref === undefined && !schema.anyOf) return schema;
    const { description, ...rest } = schema;
    return described({ anyOf: [rest, { type: "null" }] }, description);
  }
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes("null")) return schema;
  return { ...schema, type: [...types, "null"], ...(schema.enum ? { enum: [...schema.enum, null] } : {}) };
}

function described(schema: JsonSchema, description: string | undefined): JsonSchema {
  return description === undefined ? schema : { ...schema, description };
}

function wellKnown(message: DescMessage): JsonSchema | undefined {
  if (!message.typeName.startsWith("google.")) return undefined;
  const known = WELL_KNOWN[message.typeName];
  // A new well-known type in the protos needs its JSON form here, not a guess.
  if (!known) throw new Error(`no JSON Schema for ${message.typeName}: add it to tools/openapi/schemas.ts`);
  return known;
}

/** An enum's strings as the facade writes them: the wire names, a value without one by its proto name. */
function renderedNames(desc: DescEnum): string[] {
  return desc.values.filter((value) => value.number !== 0).map((value) => wireName(desc, value.number) ?? value.name);
}

function scalarSchema(type: ScalarType): JsonSchema {
  switch (type) {
    case ScalarType.STRING:
      return { type: "string" };
    case ScalarType.BOOL:
      return { type: "boolean" };
    case ScalarType.BYTES:
      return { type: "string", contentEncoding: "base64" };
    case ScalarType.DOUBLE:
      return { type: "number", format: "double" };
    case ScalarType.FLOAT:
      return { type: "number", format: "float" };
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return { type: "integer", format: "int32" };
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return { type: "integer", minimum: 0, maximum: 4294967295 };
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      // JSON numbers, not strings, even where 64-bit (docs/api/conventions.md).
      return { type: "integer", format: "int64", minimum: 0 };
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return { type: "integer", format: "int64" };
  }
}
