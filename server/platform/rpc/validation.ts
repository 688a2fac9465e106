import type { DescEnum, DescField, DescMessage, JsonObject, JsonValue, Message } from "@bufbuild/protobuf";
import { reflect, type ReflectMessage } from "@bufbuild/protobuf/reflect";
import type { ListValue, Value } from "@bufbuild/protobuf/wkt";
import type { Interceptor } from "@connectrpc/connect";
import { rules as rulesOption, type FieldRules } from "../../../gen/gateway/v1/options_pb.js";
import { gatewayError } from "../../../wire/errors.js";
import { setOptionOf } from "../../../wire/proto-options.js";
import { FREE_FORM, jsonViolation, keySegment, keyViolation, sizeViolation, valueViolation } from "./json-rules.js";

/**
 * Enforces the `(gateway.v1.rules)` of every request field before a handler runs, for REST and
 * gRPC alike, and answers 400 naming the first violation. Rules that need the database or span
 * several fields belong to the handlers.
 *
 * Two rules hold for every field without being declared (docs/decisions.md, "Hostile input: text
 * and numbers"): every string — field, list element, map key and value, and every key and string
 * of free-form JSON (Struct, Value, ListValue) at any depth — passes `textProblem`, and every
 * number is finite. Free-form JSON nests at most MAX_JSON_DEPTH levels.
 */
export function validationInterceptor(): Interceptor {
  return (next) => async (req) => {
    if (!req.stream) {
      assertValid(req.method.input, req.message);
      return next(req);
    }
    const schema = req.method.input;
    const source = req.message;
    async function* validated() {
      for await (const message of source) {
        assertValid(schema, message);
        yield message;
      }
    }
    return next({ ...req, message: validated() });
  };
}

export function assertValid(schema: DescMessage, message: Message): void {
  const violation = firstViolation(reflect(schema, message), "");
  if (violation) throw gatewayError(400, violation.message, { field: violation.field });
}

/** A broken rule: the message (which names the field) and the path of the field it sits in. */
interface Violation {
  field: string;
  message: string;
}

function firstViolation(message: ReflectMessage, prefix: string): Violation | undefined {
  for (const field of message.fields) {
    const name = prefix + field.name;
    const rules = setOptionOf(field, rulesOption);
    const violation = checkField(message, field, name, rules);
    // A string is about this field; a nested message's violation already names its own.
    if (violation) return typeof violation === "string" ? { field: name, message: violation } : violation;
  }
  return undefined;
}

function checkField(
  message: ReflectMessage,
  field: DescField,
  name: string,
  rules: FieldRules | undefined,
): string | Violation | undefined {
  switch (field.fieldKind) {
    case "list": {
      const list = message.get(field);
      const size = sizeViolation("list", list.size, name, rules);
      if (size) return size;
      if (field.listKind === "message" && FREE_FORM.has(field.message.typeName)) {
        const items = localOf(message, field) as unknown[];
        return firstOf(items, (item, i) => jsonViolation(freeFormJson(field.message, item), `${name}[${i}]`));
      }
      let index = 0;
      for (const item of list) {
        const itemName = `${name}[${index++}]`;
        const violation =
          field.listKind === "message"
            ? firstViolation(item as ReflectMessage, `${itemName}.`)
            : field.listKind === "enum"
              ? checkEnum(field.enum, item as number, itemName, true)
              : valueViolation(item, itemName, rules);
        if (violation) return violation;
      }
      return undefined;
    }
    case "map": {
      const map = message.get(field);
      const size = sizeViolation("map", map.size, name, rules);
      if (size) return size;
      const locals =
        field.mapKind === "message" && FREE_FORM.has(field.message.typeName)
          ? (localOf(message, field) as Record<string, unknown>)
          : undefined;
      for (const [key, value] of map) {
        const badKey = typeof key === "string" ? keyViolation(key, name) : undefined;
        if (badKey) return badKey;
        const entryName = name + keySegment(String(key));
        const violation =
          field.mapKind === "message"
            ? locals
              ? jsonViolation(freeFormJson(field.message, locals[String(key)]), entryName)
              : firstViolation(value as ReflectMessage, `${entryName}.`)
            : field.mapKind === "enum"
              ? undefined
              : valueViolation(value, entryName, undefined);
        if (violation) return violation;
      }
      return undefined;
    }
    case "message": {
      if (!message.isSet(field)) return rules?.required ? `${name} is required` : undefined;
      if (FREE_FORM.has(field.message.typeName))
        return jsonViolation(freeFormJson(field.message, localOf(message, field)), name);
      if (field.message.file.name.startsWith("google/")) return undefined;
      return firstViolation(message.get(field), `${name}.`);
    }
    case "enum": {
      if (!message.isSet(field)) return rules?.required ? `${name} is required` : undefined;
      return checkEnum(field.enum, message.get(field), name, false);
    }
    default: {
      // For implicit-presence fields isSet means "not the zero value".
      if (!message.isSet(field)) return rules?.required ? `${name} is required` : undefined;
      return valueViolation(message.get(field), name, rules);
    }
  }
}

/**
 * The REST decoder admits only the API's strings; a binary client can send any number, which
 * must never reach a handler as a value without a wire name (or, in a list, as "not set").
 */
function checkEnum(desc: DescEnum, value: number, name: string, inList: boolean): string | undefined {
  if (desc.values.some((v) => v.number === value && (v.number !== 0 || !inList))) return undefined;
  return `${name} has an unknown value (${value})`;
}

/**
 * A free-form field's value as the message holds it, not through reflect's get(), which would copy
 * a Struct's JsonObject into a tree of Value messages first.
 */
function localOf(message: ReflectMessage, field: DescField): unknown {
  const local = message.message as unknown as Record<string, unknown>;
  if (!field.oneof) return local[field.localName];
  const member = local[field.oneof.localName] as { case?: string; value?: unknown };
  return member.case === field.localName ? member.value : undefined;
}

/** A free-form value as plain JSON, numbers kept as they are (protobuf-es' toJson throws on NaN). */
function freeFormJson(schema: DescMessage, local: unknown): JsonValue {
  switch (schema.typeName) {
    case "google.protobuf.Struct":
      return (local ?? {}) as JsonObject;
    case "google.protobuf.ListValue":
      return (local as ListValue | undefined)?.values.map(valueJson) ?? [];
    default:
      return local === undefined ? null : valueJson(local as Value);
  }
}

function valueJson(value: Value): JsonValue {
  switch (value.kind.case) {
    case "structValue":
      return Object.fromEntries(Object.entries(value.kind.value.fields).map(([key, v]) => [key, valueJson(v)]));
    case "listValue":
      return value.kind.value.values.map(valueJson);
    case "nullValue":
    case undefined:
      return null;
    default:
      return value.kind.value;
  }
}

function firstOf<T>(items: readonly T[], check: (item: T, index: number) => string | undefined): string | undefined {
  for (let i = 0; i < items.length; i++) {
    const violation = check(items[i]!, i);
    if (violation) return violation;
  }
  return undefined;
}
