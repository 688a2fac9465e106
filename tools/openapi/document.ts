import type { DescMessage, DescService } from "@bufbuild/protobuf";
import { RouteTable, type Route } from "../../facade/route-table.js";
import { commentOf } from "./comments.js";
import { ERROR_RESPONSE_NAME, ERROR_SCHEMA_NAME, errorResponse, errorSchema } from "./error-envelope.js";
import { headerComponents } from "./headers.js";
import type { HttpVerb, OpenApiDocument, PathItem, Tag } from "./openapi-types.js";
import { operationOf } from "./operation.js";
import { rawBodyMessage, rawReplyMessage, type FindMessage } from "./request-body.js";
import { MessageSchemas, type Direction } from "./schemas.js";

/**
 * The OpenAPI 3.1 document of the REST API: one operation per route of the facade's own route
 * table, compiled from the same `google.api.http` rules by the same code (facade/route-table.ts),
 * so that paths, verbs, bodies, success statuses and reply modes cannot disagree with what is
 * served. Deterministic: routes in service and method order, components sorted by name.
 */
export const BEARER_SCHEME = "bearerAuth";

const DESCRIPTION =
  "The REST API of the model gateway, generated from its protos (`proto/`).\n" +
  "\n" +
  "- JSON uses the protos' field names (snake_case; lowerCamel names are accepted in requests). " +
  "Integers are JSON numbers, also where 64-bit. Enums are lowercase strings. " +
  "Timestamps are ISO 8601 UTC strings. Unknown request fields are ignored; " +
  '`null` in a request means "not set", and in a PATCH body it clears the field.\n' +
  "- Every path under `/api/v1` is also served under `/v1` " +
  "(an alias: the same operations, as OpenAI's clients expect).\n" +
  "- Authenticate with `Authorization: Bearer <API key>`; operations marked without security need no key.\n" +
  '- Every error is `{"error": {"code", "message", "metadata"?: {"reason", "retryable"}}}`.\n' +
  "- Server streams are server-sent events (`text/event-stream`); their schema is that of one event's `data`.";

export function openApiDocument(services: readonly DescService[], findMessage: FindMessage): OpenApiDocument {
  const { routes } = RouteTable.fromServices(services);
  const schemas = new MessageSchemas(routes.flatMap((route) => schemaRoots(route, findMessage)));
  const paths: Record<string, PathItem> = {};
  const tags = new Map<string, Tag>();
  const bindings = new Map<DescService, Map<string, number>>();
  for (const route of routes) {
    const service = route.method.parent;
    if (!tags.has(service.name)) tags.set(service.name, { name: service.name, ...described(commentOf(service)) });
    const seen = bindings.get(service) ?? new Map<string, number>();
    bindings.set(service, seen);
    const count = (seen.get(route.method.name) ?? 0) + 1;
    seen.set(route.method.name, count);
    // An additional binding of the same RPC gets a numbered id, as operation ids must be unique.
    const operationId = `${service.name}_${route.method.name}${count > 1 ? `_${count}` : ""}`;
    const item = (paths[openApiPath(route)] ??= {});
    item[verbOf(route)] = operationOf(route, operationId, schemas, findMessage);
  }
  return {
    openapi: "3.1.0",
    info: { title: "Model Gateway API", version: "v1", description: DESCRIPTION },
    tags: [...tags.values()],
    security: [{ [BEARER_SCHEME]: [] }],
    paths,
    components: {
      schemas: { [ERROR_SCHEMA_NAME]: errorSchema, ...schemas.all() },
      responses: { [ERROR_RESPONSE_NAME]: errorResponse },
      // Each header once, referred to by the operations it applies to (headers.ts).
      ...headerComponents(),
      securitySchemes: {
        [BEARER_SCHEME]: { type: "http", scheme: "bearer", description: "An API key of the gateway." },
      },
    },
  };
}

/** The messages a route's JSON bodies are made of, in each direction. */
function schemaRoots(route: Route, findMessage: FindMessage): Array<readonly [DescMessage, Direction]> {
  const roots: Array<readonly [DescMessage, Direction]> = [];
  const { input, output } = route.method;
  const rawReply = output.typeName === "google.api.HttpBody" ? rawReplyMessage(route, findMessage) : output;
  if (rawReply) roots.push([rawReply, "response"]);
  if (input.typeName === "google.api.HttpBody") {
    const raw = rawBodyMessage(route, findMessage);
    if (raw) roots.push([raw, "request"]);
  } else if (route.bodyField?.fieldKind === "message") {
    roots.push([route.bodyField.message, "request"]);
  } else if (route.body === "*") {
    roots.push([input, "request"]);
  }
  return roots;
}

/** `/api/v1/keys/{hash}`: the template with every variable as `{name}`. */
function openApiPath(route: Route): string {
  const segments = route.segments.map((segment) =>
    segment.kind === "literal" ? segment.value : `{${segment.field.join(".")}}`,
  );
  return `/${segments.join("/")}`;
}

const VERBS: readonly string[] = [
  "get",
  "put",
  "post",
  "delete",
  "patch",
  "head",
  "options",
  "trace",
] satisfies HttpVerb[];

function verbOf(route: Route): HttpVerb {
  const verb = route.verb.toLowerCase();
  if (!isVerb(verb)) throw new Error(`${route.template}: OpenAPI has no operation for the verb ${route.verb}`);
  return verb;
}

function isVerb(verb: string): verb is HttpVerb {
  return VERBS.includes(verb);
}

function described(text: string | undefined): { description?: string } {
  return text === undefined ? {} : { description: text };
}
