import { getOption, hasOption, type DescField, type DescMethod, type DescService } from "@bufbuild/protobuf";
import { http } from "../gen/google/api/annotations_pb.js";
import type { HttpRule } from "../gen/google/api/http_pb.js";
import { error_dialect, http_success_code, sse_named_events, type ErrorDialect } from "../gen/gateway/v1/options_pb.js";
import { maxBodyBytesOf } from "../wire/body-limits.js";
import { findField } from "../wire/json-input.js";
import { resolvePath, type PathStep } from "./field-paths.js";
import { parseTemplate, type Segment } from "./path-template.js";

/**
 * How a route answers, fixed by its method's shape:
 * - `json`: one message as JSON (unary and client-streaming methods);
 * - `empty`: a 204 without a body;
 * - `http-body`: one `google.api.HttpBody`, its bytes as they are;
 * - `http-body-stream`: a server stream of HttpBody, written as it comes;
 * - `stream`: a server stream as SSE, or one plain JSON body when its first message carries a
 *   `(gateway.v1.json_reply)` member (chat completions with `stream: false`).
 */
export type ReplyMode = "json" | "empty" | "http-body" | "http-body-stream" | "stream";

/**
 * One REST binding of an RPC, compiled from its `google.api.http` rule at start-up: everything a
 * request needs from the descriptors (variable and body fields, the update mask, the reply mode)
 * is resolved here once, and a rule the facade could not serve fails the start.
 */
export interface Route {
  verb: string;
  template: string;
  segments: Segment[];
  method: DescMethod;
  /** "" (no body), "*" (the whole request message) or the name of the field the body fills. */
  body: string;
  /** The field a named `body` fills. */
  bodyField: DescField | undefined;
  /** The fields the path variables fill, in the order of the template. */
  variableFields: PathStep[][];
  /** The request's `google.protobuf.FieldMask update_mask`, filled from a PATCH body's keys. */
  updateMask: DescField | undefined;
  reply: ReplyMode;
  successCode: number;
  maxBodyBytes: number;
  /** SSE events named after each message's `type`, without `[DONE]` (`(gateway.v1.sse_named_events)`). */
  sseNamedEvents: boolean;
  /** Whose error `type` names its errors carry beside the API's envelope (`(gateway.v1.error_dialect)`). */
  errorDialect: ErrorDialect;
}

export type Match =
  | { kind: "route"; route: Route; values: string[] }
  | { kind: "wrong-verb"; allowed: string[] }
  | { kind: "none" };

interface Node {
  literals: Map<string, Node>;
  variable: Node | undefined;
  routes: Map<string, Route>;
}

const newNode = (): Node => ({ literals: new Map(), variable: undefined, routes: new Map() });

/**
 * Path prefixes that answer exactly as another, by sharing its node of the trie: the same routes,
 * access rules, limits and errors, and the same route template in records (the canonical one).
 * `/v1` is OpenAI's convention, which clients given `http://host/v1` as their base URL follow.
 */
export const BASE_ALIASES: ReadonlyArray<{ alias: readonly string[]; base: readonly string[] }> = [
  { alias: ["v1"], base: ["api", "v1"] },
];

/** The facade's route table: a trie of path segments, literals tried before variables. */
export class RouteTable {
  private readonly root = newNode();
  readonly routes: Route[] = [];

  static fromServices(services: readonly DescService[]): RouteTable {
    const table = new RouteTable();
    for (const service of services) {
      for (const method of service.methods) {
        if (!hasOption(method, http)) continue;
        const rule = getOption(method, http);
        for (const binding of [rule, ...rule.additionalBindings]) table.add(routeOf(method, binding));
      }
    }
    for (const { alias, base } of BASE_ALIASES) table.alias(alias, base);
    return table;
  }

  /** Makes the literal path `alias` lead where `base` leads; neither may be a route's own path. */
  alias(alias: readonly string[], base: readonly string[]): void {
    let target: Node | undefined = this.root;
    for (const segment of base) target = target?.literals.get(segment);
    if (!target) throw new Error(`/${base.join("/")} leads to no route: /${alias.join("/")} cannot be its alias`);
    let node = this.root;
    for (const segment of alias.slice(0, -1)) {
      let next = node.literals.get(segment);
      if (!next) node.literals.set(segment, (next = newNode()));
      node = next;
    }
    const last = alias[alias.length - 1]!;
    if (node.literals.has(last))
      throw new Error(`/${alias.join("/")} has routes of its own: it cannot be an alias of /${base.join("/")}`);
    node.literals.set(last, target);
  }

  add(route: Route): void {
    let node = this.root;
    for (const segment of route.segments) {
      if (segment.kind === "literal") {
        let next = node.literals.get(segment.value);
        if (!next) node.literals.set(segment.value, (next = newNode()));
        node = next;
      } else {
        node = node.variable ??= newNode();
      }
    }
    const clash = node.routes.get(route.verb);
    if (clash)
      throw new Error(`${route.verb} ${route.template} is bound twice: ${clash.method.name} and ${route.method.name}`);
    node.routes.set(route.verb, route);
    this.routes.push(route);
  }

  match(verb: string, segments: string[]): Match {
    const allowed = new Set<string>();
    const found = this.walk(this.root, segments, 0, verb, [], allowed);
    if (found) return found;
    return allowed.size > 0 ? { kind: "wrong-verb", allowed: [...allowed].sort() } : { kind: "none" };
  }

  private walk(
    node: Node,
    segments: string[],
    index: number,
    verb: string,
    values: string[],
    allowed: Set<string>,
  ): Match | undefined {
    if (index === segments.length) {
      const route = node.routes.get(verb);
      if (!route) {
        for (const v of node.routes.keys()) allowed.add(v);
        return undefined;
      }
      return { kind: "route", route, values };
    }
    const segment = segments[index]!;
    const literal = node.literals.get(segment);
    const viaLiteral = literal && this.walk(literal, segments, index + 1, verb, values, allowed);
    if (viaLiteral) return viaLiteral;
    if (node.variable && segment !== "") {
      return this.walk(node.variable, segments, index + 1, verb, [...values, segment], allowed);
    }
    return undefined;
  }
}

function routeOf(method: DescMethod, rule: HttpRule): Route {
  const { pattern } = rule;
  if (pattern.case === undefined) throw new Error(`${method.name}: google.api.http rule without a path`);
  const [verb, template] =
    pattern.case === "custom"
      ? [pattern.value.kind.toUpperCase(), pattern.value.path]
      : [pattern.case.toUpperCase(), pattern.value];
  const segments = parseTemplate(template);
  const schema = method.input;
  const variableFields = segments.flatMap((segment) => {
    if (segment.kind !== "variable") return [];
    const path = resolvePath(schema, segment.field);
    if (!path) throw new Error(`${template}: no field ${segment.field.join(".")} in ${schema.typeName}`);
    return [path];
  });
  const bodyField = rule.body === "" || rule.body === "*" ? undefined : findField(schema, rule.body);
  if (rule.body !== "" && rule.body !== "*" && !bodyField)
    throw new Error(`${template}: body field ${rule.body} is not in ${schema.typeName}`);
  const mask = findField(schema, "update_mask");
  const successCode = getOption(method, http_success_code) || 200;
  return {
    verb,
    template,
    segments,
    method,
    body: rule.body,
    bodyField,
    variableFields,
    updateMask:
      mask?.fieldKind === "message" && mask.message.typeName === "google.protobuf.FieldMask" ? mask : undefined,
    reply: replyMode(method, successCode),
    successCode,
    maxBodyBytes: maxBodyBytesOf(method),
    sseNamedEvents: getOption(method, sse_named_events),
    errorDialect: getOption(method, error_dialect),
  };
}

function replyMode(method: DescMethod, successCode: number): ReplyMode {
  const httpBody = method.output.typeName === "google.api.HttpBody";
  if (method.methodKind === "server_streaming") return httpBody ? "http-body-stream" : "stream";
  if (httpBody) return "http-body";
  return successCode === 204 ? "empty" : "json";
}
