import type { JsonValue } from "@bufbuild/protobuf";
import type { FieldRules } from "../../../gen/gateway/v1/options_pb.js";
import { textProblem, UUID_PATTERN } from "../../../wire/text-rules.js";

export const NOT_FINITE = "must be a finite number";

/** How deep free-form JSON may nest, as protobuf-es' own JSON and binary readers allow. */
export const MAX_JSON_DEPTH = 100;

/** Free-form JSON types; a Struct field holds a JsonObject, Value and ListValue fields hold messages. */
export const FREE_FORM: ReadonlySet<string> = new Set([
  "google.protobuf.Struct",
  "google.protobuf.Value",
  "google.protobuf.ListValue",
]);

/**
 * A string, number or bigint field value against its rules (list items against their list's rules,
 * map values against none): the text rule, finiteness, lengths in code points, UUID, pattern, bounds.
 * Like every check here, it serves both the validation interceptor (validation.ts, over a decoded
 * message) and the compiled JSON validator (json-validator.ts, over a parsed body), and builds
 * nothing when the value passes.
 */
export function valueViolation(value: unknown, name: string, rules: FieldRules | undefined): string | undefined {
  if (typeof value === "string") {
    const problem = textProblem(value);
    if (problem) return `${name} ${problem}`;
    if (!rules) return undefined;
    const length = codePointsNeeded(value, rules) ? codePointLength(value) : value.length;
    if (rules.required && length === 0) return `${name} is required`;
    if (rules.minLen !== undefined && length < rules.minLen)
      return `${name} must be at least ${rules.minLen} character(s)`;
    if (rules.maxLen !== undefined && length > rules.maxLen)
      return `${name} must be at most ${rules.maxLen} characters`;
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

/**
 * Whether a length rule's answer depends on the exact code-point count. A well-formed string of n
 * UTF-16 units has between ⌈n/2⌉ and n code points, so n itself answers every rule whose bound lies
 * outside that range, and the count (a walk over the string) is taken only near a bound.
 */
function codePointsNeeded(value: string, rules: FieldRules): boolean {
  return (
    (rules.minLen !== undefined && value.length < 2 * rules.minLen) ||
    (rules.maxLen !== undefined && value.length > rules.maxLen)
  );
}

/** Code points of a well-formed string (textProblem has refused unpaired surrogates). */
function codePointLength(value: string): number {
  let length = value.length;
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    if (unit >= 0xdc00 && unit <= 0xdfff) length--;
  }
  return length;
}

/** The size rules of a list or map field. */
export function sizeViolation(
  kind: "list" | "map",
  size: number,
  name: string,
  rules: FieldRules | undefined,
): string | undefined {
  if (!rules) return undefined;
  if (rules.required && size === 0) return `${name} is required`;
  if (kind === "list") {
    if (rules.minItems !== undefined && size < rules.minItems)
      return `${name} must have at least ${rules.minItems} item(s)`;
    if (rules.maxItems !== undefined && size > rules.maxItems)
      return `${name} must have at most ${rules.maxItems} items`;
    return undefined;
  }
  if (rules.minItems !== undefined && size < rules.minItems)
    return `${name} must have at least ${rules.minItems} entr${rules.minItems === 1 ? "y" : "ies"}`;
  if (rules.maxItems !== undefined && size > rules.maxItems)
    return `${name} must have at most ${rules.maxItems} entries`;
  return undefined;
}

/** A key of the object `name` (a map field, a Struct) that breaks the text rule. */
export function keyViolation(key: string, name: string): string | undefined {
  return keyProblem(key, undefined, name);
}

/** `.key` where the key reads as a name, else `["key"]`, shortened: error messages echo it. */
export function keySegment(key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/.test(key) ? `.${key}` : `[${JSON.stringify(shortened(key))}]`;
}

/**
 * The first value of free-form JSON that breaks the text or number rule, or nests too deep; `name`
 * is the field it sits in. Iterative, since JSON parsed from a request (the streamed batch body)
 * can nest deeper than a call stack; names are built only for a violation, as this runs on every
 * inference request.
 */
export function jsonViolation(root: JsonValue, name: string): string | undefined {
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
        for (let i = value.length - 1; i >= 0; i--)
          pending.push({ value: value[i]!, parent: node, step: i, depth: depth + 1 });
      } else {
        const keys = Object.keys(value);
        for (const key of keys) {
          const problem = keyProblem(key, node, name);
          if (problem) return problem;
        }
        for (let i = keys.length - 1; i >= 0; i--)
          pending.push({ value: value[keys[i]!]!, parent: node, step: keys[i]!, depth: depth + 1 });
      }
    }
  }
  return undefined;
}

/** scanJson's answer: a bit set. */
export const JSON_VIOLATION = 1;
/** Some value lies deeper than the limit given to scanJson. */
export const JSON_TOO_DEEP = 2;

/**
 * jsonViolation's verdict without its names or nodes, for the path where nothing is wrong:
 * JSON_VIOLATION when jsonViolation(value) would answer one. `depth` is the value's own depth
 * (0 for a field's value); JSON_TOO_DEEP when a value (of any type) sits deeper than `limit`, the
 * stricter depth of protobuf-es' JSON reader, which counts from the request's root. Recursive: it
 * descends at most MAX_JSON_DEPTH levels.
 */
export function scanJson(value: JsonValue, depth: number, limit: number): number {
  if (depth > limit) return JSON_TOO_DEEP;
  if (typeof value === "string") return textProblem(value) === undefined ? 0 : JSON_VIOLATION;
  if (typeof value === "number") return Number.isFinite(value) ? 0 : JSON_VIOLATION;
  if (value === null || typeof value !== "object") return 0;
  if (depth === MAX_JSON_DEPTH) return JSON_VIOLATION;
  let found = 0;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      found |= scanJson(value[i]!, depth + 1, limit);
      if (found & JSON_TOO_DEEP) return found;
    }
    return found;
  }
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (textProblem(key) !== undefined) found |= JSON_VIOLATION;
    found |= scanJson(value[key]!, depth + 1, limit);
    if (found & JSON_TOO_DEEP) return found;
  }
  return found;
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
  return steps.reduceRight<string>(
    (name, step) => (typeof step === "number" ? `${name}[${step}]` : name + keySegment(step)),
    root,
  );
}

function keyProblem(key: string, node: JsonNode | undefined, root: string): string | undefined {
  const problem = textProblem(key);
  return problem && `${node ? nameOf(node, root) : root} has a key ${JSON.stringify(shortened(key))} that ${problem}`;
}

function shortened(key: string): string {
  return key.length > 64 ? `${key.slice(0, 64)}…` : key;
}

const patterns = new Map<string, RegExp>();

/** A rule's pattern, compiled once. */
export function patternOf(source: string): RegExp {
  let pattern = patterns.get(source);
  if (!pattern) {
    pattern = new RegExp(source, "u");
    patterns.set(source, pattern);
  }
  return pattern;
}
