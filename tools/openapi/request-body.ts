import type { DescField, DescMessage } from "@bufbuild/protobuf";
import { raw_body_message, raw_reply_message } from "../../gen/gateway/v1/options_pb.js";
import { FILE_FIELD } from "../../facade/multipart-upload.js";
import type { Route } from "../../facade/route-table.js";
import { optionOf } from "../../wire/proto-options.js";
import type { JsonSchema, RequestBody } from "./openapi-types.js";
import type { MessageSchemas } from "./schemas.js";

/** Finds a message of the protos by its fully-qualified name. */
export type FindMessage = (typeName: string) => DescMessage | undefined;

/**
 * A route's request body, as the facade reads it: the JSON of the whole request (`body: "*"`,
 * less what the path fills) or of one field (`body: "<field>"`); for a client-streaming RPC a
 * multipart upload, or the raw body when it takes `google.api.HttpBody` (described as the
 * message `(gateway.v1.raw_body_message)` names, when it names one; a JSON object otherwise unless
 * streamed). Every body is bounded by the
 * route's `(gateway.v1.max_body_bytes)`.
 */
export function requestBodyOf(
  route: Route,
  schemas: MessageSchemas,
  findMessage: FindMessage,
): RequestBody | undefined {
  const limit = `At most ${sizeText(route.maxBodyBytes)}; a larger body gets 413.`;
  const { method } = route;
  if (method.methodKind === "client_streaming") {
    if (method.input.typeName === "google.api.HttpBody") {
      const message = rawBodyMessage(route, findMessage);
      return {
        description: `The raw body, read as it arrives. ${limit}`,
        required: true,
        content: message
          ? { "application/json": { schema: schemas.ref(message, "request") } }
          : { "*/*": { schema: BINARY } },
      };
    }
    return {
      description:
        `The file in the multipart field \`${FILE_FIELD}\`, streamed; ` +
        "its name and content type come from the part's headers, " +
        `the other metadata from the query parameters. ${limit}`,
      required: true,
      content: {
        "multipart/form-data": {
          schema: { type: "object", properties: { [FILE_FIELD]: BINARY }, required: [FILE_FIELD] },
        },
      },
    };
  }
  if (route.body === "") return undefined;
  if (method.input.typeName === "google.api.HttpBody") {
    // Read whole and parsed by the service (the JSON-native inference routes).
    const message = rawBodyMessage(route, findMessage);
    return {
      description: limit,
      required: true,
      content: { "application/json": { schema: message ? schemas.ref(message, "request") : { type: "object" } } },
    };
  }
  const schema = route.bodyField ? schemas.field(route.bodyField, "request").schema : wholeRequest(route, schemas);
  return { description: limit, required: true, content: { "application/json": { schema } } };
}

/** The message the raw body of an HttpBody upload is the JSON of, if the method names one. */
export function rawBodyMessage(route: Route, findMessage: FindMessage): DescMessage | undefined {
  return namedMessage(route, optionOf(route.method, raw_body_message), "raw_body_message", findMessage);
}

/** The message an HttpBody answer is the JSON of, if the method names one. */
export function rawReplyMessage(route: Route, findMessage: FindMessage): DescMessage | undefined {
  return namedMessage(route, optionOf(route.method, raw_reply_message), "raw_reply_message", findMessage);
}

function namedMessage(route: Route, name: string, option: string, findMessage: FindMessage): DescMessage | undefined {
  if (name === "") return undefined;
  const message = findMessage(name);
  if (!message)
    throw new Error(
      `${route.method.parent.typeName}.${route.method.name}: (gateway.v1.${option}) names no message: ${name}`,
    );
  return message;
}

export const BINARY: JsonSchema = { type: "string", format: "binary" };

function wholeRequest(route: Route, schemas: MessageSchemas): JsonSchema {
  const exclude = new Set<DescField>(
    route.variableFields.filter((path) => path.length === 1).map((path) => path[0]!.field),
  );
  if (route.updateMask) exclude.add(route.updateMask);
  return schemas.body(route.method.input, { exclude, clearable: route.updateMask !== undefined });
}

function sizeText(bytes: number): string {
  const MiB = 1024 * 1024;
  if (bytes % MiB === 0) return `${bytes / MiB} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}
