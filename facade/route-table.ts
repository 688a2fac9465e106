import { getOption, hasOption, type DescMethod, type DescService } from "@bufbuild/protobuf";
import { http } from "../gen/google/api/annotations_pb.js";
import type { HttpRule } from "../gen/google/api/http_pb.js";
import { http_success_code, max_body_bytes, sse_named_events } from "../gen/gateway/v1/options_pb.js";
import { parseTemplate, type Segment } from "./path-template.js";

/** One REST binding of an RPC, compiled from its `google.api.http` rule. */
export interface Route {
  verb: string;
  template: string;
  segments: Segment[];
  method: DescMethod;
  /** "" (no body), "*" (the whole request message) or the name of the field the body fills. */
  body: string;
  successCode: number;
  maxBodyBytes: number;
  /** SSE events named after each message's `type`, without `[DONE]` (`(gateway.v1.sse_named_events)`). */
  sseNamedEvents: boolean;
}

export type Match =
  | { kind: "route"; route: Route; variables: Array<[string[], string]> }
  | { kind: "wrong-verb"; allowed: string[] }
  | { kind: "none" };

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

interface Node {
  literals: Map<string, Node>;
  variable: Node | undefined;
  routes: Map<string, Route>;
}

const newNode = (): Node => ({ literals: new Map(), variable: undefined, routes: new Map() });

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
    return table;
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
    if (clash) throw new Error(`${route.verb} ${route.template} is bound twice: ${clash.method.name} and ${route.method.name}`);
    node.routes.set(route.verb, route);
    this.routes.push(route);
  }

  match(verb: string, segments: string[]): Match {
    const allowed = new Set<string>();
    const found = this.walk(this.root, segments, 0, verb, [], allowed);
    if (found) return found;
    return allowed.size > 0 ? { kind: "wrong-verb", allowed: [...allowed].sort() } : { kind: "none" };
  }

  private walk(node: Node, segments: string[], index: number, verb: string, values: string[], allowed: Set<string>): Match | undefined {
    if (index === segments.length) {
      const route = node.routes.get(verb);
      if (!route) {
        for (const v of node.routes.keys()) allowed.add(v);
        return undefined;
      }
      const variables: Array<[string[], string]> = [];
      let next = 0;
      for (const segment of route.segments) if (segment.kind === "variable") variables.push([segment.field, values[next++]!]);
      return { kind: "route", route, variables };
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
  const [verb, template] = pattern.case === "custom" ? [pattern.value.kind.toUpperCase(), pattern.value.path] : [pattern.case.toUpperCase(), pattern.value];
  return {
    verb,
    template,
    segments: parseTemplate(template),
    method,
    body: rule.body,
    successCode: getOption(method, http_success_code) || 200,
    maxBodyBytes: Number(getOption(method, max_body_bytes)) || DEFAULT_MAX_BODY_BYTES,
    sseNamedEvents: getOption(method, sse_named_events),
  };
}
