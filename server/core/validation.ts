import { type DescEnum, type DescField, type DescMessage, type JsonObject, type JsonValue, type Message } from "@bufbuild/protobuf";
import { reflect, type ReflectMessage } from "@bufbuild/protobuf/reflect";
import type { ListValue, Value } from "@bufbuild/protobuf/wkt";
import type { Interceptor } from "@connectrpc/connect";
import { rules as rulesOption, type FieldRules } from "../../gen/gateway/v1/options_pb.js";
import { gatewayError } from "../../wire/errors.js";
import { setOptionOf } from "../../wire/proto-options.js";
import { textProblem, UUID_PATTERN } from "../../wire/text-rules.js";

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

const patterns = new Map<string, RegExp>();

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

function checkField(message: ReflectMessage, field: DescField, name: string, rules: FieldRules | undefined): string | Violation | undefined {
  switch (field.fieldKind) {
    case "list": {
      const list = message.get(field);
      if (rules?.required && list.size === 0) return `${name} is required`;
      if (rules?.minItems !== undefined && list.size < rules.minItems) return `${name} must have at least ${rules.minItems} item(s)`;
      if (rules?.maxItems !== undefined && list.size > rules.maxItems) return `${name} must have at most ${rules.maxItems} items`;
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
              : checkValue(item, itemName, rules);
        if (violation) return violation;
      }
      return undefined;
    }
    case "map": {
      const map = message.get(field);
      if (rules?.required && map.size === 0) return `${name} is required`;
      if (rules?.minItems !== undefined && map.size < rules.minItems) return `${name} must have at least ${rules.minItems} entr${rules.minItems === 1 ? "y" : "ies"}`;
      if (rules?.maxItems !== undefined && map.size > rules.maxItems) return `${name} must have at most ${rules.maxItems} entries`;
      const locals = field.mapKind === "message" && FREE_FORM.has(field.message.typeName) ? (localOf(message, field) as Record<string, unknown>) : undefined;
      for (const [key, value] of map) {
        const keyViolation = typeof key === "string" ? keyProblem(key, undefined, name) : undefined;
        if (keyViolation) return keyViolation;
        const entryName = name + keySegment(String(key));
        const violation =
          field.mapKind === "message"
            ? locals
              ? jsonViolation(freeFormJson(field.message, locals[String(key)]), entryName)
              : firstViolation(value as ReflectMessage, `${entryName}.`)
            : field.mapKind === "enum"
              ? undefined
              : checkValue(value, entryName, undefined);
        if (violation) return violation;
      }
      return undefined;
    }
    case "message": {
      if (!message.isSet(field)) return rules?.required ? `${name} is required` : undefined;
      if (FREE_FORM.has(field.message.typeName)) return jsonViolation(freeFormJson(field.message, localOf(message, field)), name);
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
      return checkValue(message.get(field), name, rules);
    }
  }
}

/**
 * The REST decoder admits only the spec's strings; a binary client can send any number, which
 * must never reach a handler as a value without a wire name (or, in a list, as "not set").
 */
function checkEnum(desc: DescEnum, value: number, name: string, inList: boolean): string | undefined {
  if (desc.values.some((v) => v.number === value && (v.number !== 0 || !inList))) return undefined;
  return `${name} has an unknown value (${value})`;
}

function checkValue(value: unknown, name: string, rules: FieldRules | undefined): string | undefined {
  if (typeof value === "string") {
    const problem = textProblem(value);
    if (problem) return `${name} ${problem}`;
    if (!rules) return undefined;
    const length = [...value].length;
    if (rules.required && length === 0) return `${name} is required`;
    if (rules.minLen !== undefined && length < rules.minLen) return `${name} must be at least ${rules.minLen} character(s)`;
    if (rules.maxLen !== undefined && length > rules.maxLen) return `${name} must be at most ${rules.maxLen} characters`;
    if (rules.uuid && !UUID_PATTERN.test(value)) return `${name} must be a UUID`;
    if (rules.pattern && !patternOf(rules.pattern).test(value)) {
      return `${name} must match ${rules.patternHint || rules.pattern}`;
    }
    return undefined;
  }
  if (typeof value === "number" && !Number.isFinite(value)) return `${name} ${NOT_FINITE}`;
  if (rules && (typeof value === "number" || typeof value === "bigint")) {
    const number = Number(value);
    if (rules.gte !== undefined && number < rules.gte) return `${name} must be at least ${rules.gte}`;
    if (rules.gt !== undefined && number <= rules.gt) return `${name} must be greater than ${rules.gt}`;
    if (rules.lte !== undefined && number > rules.lte) return `${name} must be at most ${rules.lte}`;
  }
  return undefined;
}

const NOT_FINITE = "must be a finite number";

/** How deep free-form JSON may nest, as protobuf-es' own JSON and binary readers allow. */
const MAX_JSON_DEPTH = 100;

/** Free-form JSON types; a Struct field holds a JsonObject, Value and ListValue fields hold messages. */
const FREE_FORM = new Set(["google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"]);

/**
 * The first value of free-form JSON that breaks the text or number rule, or nests too deep; `name`
 * is the field it sits in. Iterative, since JSON parsed from a request (the streamed batch body)
 * can nest deeper than a call stack; names are built only for a violation, as this runs on every
 * inference request.
 */
function jsonViolation(root: JsonValue, name: string): string | undefined {
  const pending: JsonNode[] = [{ value: root, parent: undefined, step: "", depth: 0 }];
  for (let node = pending.pop(); node; node = pending.pop()) {
    const { value, depth } = node;
    if (typeof value === "string") {
      const problem = textProblem(value);
      if (problem) return `${nameOf(node, name)} ${problem}`;
    } else if (typeof value === "number") {
      if (!Number.isFinite(value)) return `${nameOf(node, name)} ${NOT_FINITE}`;
    } else if (value !== null && typeof value === "object") {
      if (depth === MAX_JSON_DEPTH) return `${name} is nested more than ${MAX_JSON_DEPTH} levels deep`;
      // Pushed in reverse so that the first violation in document order is the one reported.
      if (Array.isArray(value)) {
        for (let i = value.length - 1; i >= 0; i--) pending.push({ value: value[i]!, parent: node, step: i, depth: depth + 1 });
      } else {
        const keys = Object.keys(value);
        for (const key of keys) {
          const problem = keyProblem(key, node, name);
          if (problem) return problem;
        }
        for (let i = keys.length - 1; i >= 0; i--) pending.push({ value: value[keys[i]!]!, parent: node, step: keys[i]!, depth: depth + 1 });
      }
    }
  }
  return undefined;
}

interface JsonNode {
  value: JsonValue;
  parent: JsonNode | undefined;
  /** Key or index in the parent. */
  step: string | number;
  depth: number;
}

function nameOf(node: JsonNode, root: string): string {
  const steps: Array<string | number> = [];
  for (let at: JsonNode | undefined = node; at?.parent; at = at.parent) steps.push(at.step);
  return steps.reduceRight<string>((name, step) => (typeof step === "number" ? `${name}[${step}]` : name + keySegment(step)), root);
}

function keyProblem(key: string, node: JsonNode | undefined, root: string): string | undefined {
  const problem = textProblem(key);
  return problem && `${node ? nameOf(node, root) : root} has a key ${JSON.stringify(shortened(key))} that ${problem}`;
}

/** `.key` where the key reads as a name, else `["key"]`, shortened: error messages echo it. */
function keySegment(key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/.test(key) ? `.${key}` : `[${JSON.stringify(shortened(key))}]`;
}

function shortened(key: string): string {
  return key.length > 64 ? `${key.slice(0, 64)}…` : key;
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

function patternOf(source: string): RegExp {
  let pattern = patterns.get(source);
  if (!pattern) {
    pattern = new RegExp(source, "u");
    patterns.set(source, pattern);
  }
  return pattern;
}
