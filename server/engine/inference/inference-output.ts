import type { JsonObject } from "@bufbuild/protobuf";

/**
 * What the inference pipelines yield, in the wire JSON of their API: the one `reply` of a call
 * answered at once (a chat completion, a Responses `response`, a Messages `message`), or the
 * `event`s of a streamed one (chunks, stream events). The doors render it: the REST door as a JSON
 * body or SSE frames (server/services/inference/json-doors.ts), the gRPC door as the typed messages
 * (server/services/inference/typed-doors.ts).
 */
export type InferenceOutput = { kind: "reply"; value: JsonObject } | { kind: "event"; value: JsonObject };
