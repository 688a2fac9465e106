import { type DescEnum, type DescField, type DescMessage, type Message } from "@bufbuild/protobuf";
import { reflect, type ReflectMessage } from "@bufbuild/protobuf/reflect";
import type { Interceptor } from "@connectrpc/connect";
import { rules as rulesOption, type FieldRules } from "../../gen/gateway/v1/options_pb.js";
import { gatewayError } from "./errors.js";
import { setOptionOf } from "./proto-options.js";
import { UUID_PATTERN } from "./text-rules.js";

/**
 * Enforces the `(gateway.v1.rules)` of every request field before a handler runs, for REST and
 * gRPC alike, and answers 400 naming the first violation. Rules that need the database or span
 * several fields belong to the handlers.
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
  if (violation) throw gatewayError(400, violation);
}

const patterns = new Map<string, RegExp>();

function firstViolation(message: ReflectMessage, prefix: string): string | undefined {
  for (const field of message.fields) {
    const name = prefix + field.name;
    const rules = setOptionOf(field, rulesOption);
    const violation = checkField(message, field, name, rules);
    if (violation) return violation;
  }
  return undefined;
}

function checkField(message: ReflectMessage, field: DescField, name: string, rules: FieldRules | undefined): string | undefined {
  switch (field.fieldKind) {
    case "list": {
      const list = message.get(field);
      if (rules?.required && list.size === 0) return `${name} is required`;
      if (rules?.minItems !== undefined && list.size < rules.minItems) return `${name} must have at least ${rules.minItems} item(s)`;
      if (rules?.maxItems !== undefined && list.size > rules.maxItems) return `${name} must have at most ${rules.maxItems} items`;
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
      const size = message.get(field).size;
      if (rules?.required && size === 0) return `${name} is required`;
      if (rules?.minItems !== undefined && size < rules.minItems) return `${name} must have at least ${rules.minItems} entr${rules.minItems === 1 ? "y" : "ies"}`;
      if (rules?.maxItems !== undefined && size > rules.maxItems) return `${name} must have at most ${rules.maxItems} entries`;
      return undefined;
    }
    case "message": {
      if (!message.isSet(field)) return rules?.required ? `${name} is required` : undefined;
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
  if (!rules) return undefined;
  if (typeof value === "string") {
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
  if (typeof value === "number" || typeof value === "bigint") {
    const number = Number(value);
    if (rules.gte !== undefined && number < rules.gte) return `${name} must be at least ${rules.gte}`;
    if (rules.gt !== undefined && number <= rules.gt) return `${name} must be greater than ${rules.gt}`;
    if (rules.lte !== undefined && number > rules.lte) return `${name} must be at most ${rules.lte}`;
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
