import { STATUS_CODES } from "node:http";
import type { DescMessage } from "@bufbuild/protobuf";
import { envelope, json_reply } from "../../gen/gateway/v1/options_pb.js";
import type { Route } from "../../facade/route-table.js";
import { optionOf } from "../../wire/proto-options.js";
import { errorRef, errorResponses } from "./error-envelope.js";
import { successHeaders } from "./headers.js";
import type { JsonSchema, MediaType, Response, ResponseOrRef } from "./openapi-types.js";
import { BINARY, rawReplyMessage, type FindMessage } from "./request-body.js";
import type { MessageSchemas } from "./schemas.js";

/**
 * A route's answers, by the reply mode the facade compiled for it (facade/route-table.ts): JSON
 * with the `(gateway.v1.http_success_code)` status, 204 without a body, raw bytes for
 * `google.api.HttpBody`, server-sent events for a server stream — and, when the stream's
 * `(gateway.v1.envelope)` message has `(gateway.v1.json_reply)` members, one JSON body instead
 * whenever the first message carries one of them (chat with `stream: false`). Every error is the
 * shared error envelope.
 */
export function responsesOf(
  route: Route,
  schemas: MessageSchemas,
  findMessage: FindMessage,
): Record<string, ResponseOrRef> {
  const headers = successHeaders(route);
  const successes = Object.entries(successOf(route, schemas, rawReplyMessage(route, findMessage))).map(
    ([status, response]) => [status, { ...response, headers }] as const,
  );
  return { ...Object.fromEntries(successes), ...errorResponses() };
}

/** `rawReply`: the message an HttpBody answer is the wire JSON of (`(gateway.v1.raw_reply_message)`). */
function successOf(route: Route, schemas: MessageSchemas, rawReply: DescMessage | undefined): Record<string, Response> {
  const status = String(route.successCode);
  const output = rawReply ?? route.method.output;
  const reply = rawReply === undefined ? route.reply : route.reply === "http-body" ? "json" : "stream";
  switch (reply) {
    case "empty":
      return { [status]: { description: statusText(route.successCode) } };
    case "http-body":
    case "http-body-stream":
      return {
        [status]: {
          description: "The raw bytes, with their own content type.",
          content: { "*/*": { schema: BINARY } },
        },
      };
    case "json":
      return {
        [status]: { description: statusText(route.successCode), content: json(schemas.ref(output, "response")) },
      };
    case "stream": {
      const members = optionOf(output, envelope) ? output.fields : undefined;
      const replies = members?.filter((field) => optionOf(field, json_reply)) ?? [];
      const events = members
        ? members
            .filter((field) => !optionOf(field, json_reply))
            .map((field) => schemas.field(field, "response").schema)
        : [schemas.ref(output, "response")];
      const sse: Record<string, MediaType> = { "text/event-stream": { schema: { anyOf: [...events, errorRef] } } };
      if (replies.length === 0)
        return { "200": { description: capitalized(sseFraming(route.sseNamedEvents)), content: sse } };
      const reply = json(anyOf(replies.map((field) => schemas.field(field, "response").schema)));
      const either =
        `One JSON body (\`${replies.map((field) => field.name).join("`, `")}\`) ` +
        `when the service answers at once, else ${sseFraming(route.sseNamedEvents)}`;
      // The JSON answer carries the route's success status; an event stream always starts with 200.
      if (status === "200") return { "200": { description: either, content: { ...reply, ...sse } } };
      return {
        [status]: { description: statusText(route.successCode), content: reply },
        "200": { description: capitalized(sseFraming(route.sseNamedEvents)), content: sse },
      };
    }
  }
}

/** How facade/sse.ts frames a stream; the schema is that of one event's `data`. */
function sseFraming(named: boolean): string {
  return named
    ? "server-sent events, each named after its message's `type` (`event: <type>`), " +
        "`: keepalive` comments while idle, and no `[DONE]`. " +
        "A stream that fails midway ends with `event: error` and the error envelope. " +
        "The schema is that of one event's `data`."
    : "server-sent events: one `data: <JSON>` event per message, `: keepalive` comments while idle, " +
        "and `data: [DONE]` after the last. " +
        "A stream that fails midway ends with the error envelope as its last event and no `[DONE]`. " +
        "The schema is that of one event's `data`.";
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function json(schema: JsonSchema): Record<string, MediaType> {
  return { "application/json": { schema } };
}

/** anyOf, not oneOf: free-form members (a Struct) would match beside any other. */
function anyOf(schemas: JsonSchema[]): JsonSchema {
  return schemas.length === 1 ? schemas[0]! : { anyOf: schemas };
}

function statusText(status: number): string {
  return STATUS_CODES[status] ?? "Success";
}
