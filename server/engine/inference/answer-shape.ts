import { create, type DescMessage, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { wireJson } from "../../../wire/json.js";
import { isObject } from "../providers/json-shape.js";

/**
 * The contract's shape of an answer, kept while the provider's JSON passes through: the fields the
 * typed answer message always renders (wire/json.ts: implicit fields, nullable ones as `null`,
 * lists as `[]`) are added where the provider left them out, at every level the message
 * describes; nothing the provider sent is changed or removed. Compiled once per message from the
 * rendering of its empty instance, so the protos stay the one source of the shape.
 */
export type AnswerShape = (json: JsonObject) => void;

export function answerShape(schema: DescMessage): AnswerShape {
  const defaults = Object.entries(wireJson(schema, create(schema)) as JsonObject);
  const nested: Array<[string, AnswerShape]> = [];
  for (const field of schema.fields) {
    const message =
      field.fieldKind === "message" || (field.fieldKind === "list" && field.listKind === "message")
        ? field.message
        : undefined;
    if (message && !message.typeName.startsWith("google.")) nested.push([field.name, answerShape(message)]);
  }
  return (json) => {
    for (const [name, value] of defaults) {
      if (!(name in json)) json[name] = fresh(value);
    }
    for (const [name, shape] of nested) {
      const value = json[name];
      if (isObject(value)) shape(value);
      else if (Array.isArray(value)) for (const item of value) if (isObject(item)) shape(item);
    }
  };
}

/** A default of its own for each answer: an empty list or map must not be shared between answers. */
function fresh(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return [];
  return isObject(value) ? {} : value;
}
