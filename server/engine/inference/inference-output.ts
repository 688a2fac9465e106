import type { JsonObject } from "@bufbuild/protobuf";

/**
 * What the inference pipelines yield, in the wire JSON of their API: the one `reply` of a call
 * answered at once (a chat completion, a Responses `response`, a Messages `message`), or the
 * `event`s of a streamed one (chunks, stream events). The inference service renders it: its JSON
 * methods as a JSON body or SSE frames (server/services/inference/json-methods.ts), its typed
 * methods as the typed messages (server/services/inference/typed-methods.ts). `native`: already in
 * the client's format (a Responses or Messages answer an endpoint gave natively), which the
 * translation back must leave alone.
 */
export type InferenceOutput =
  | { kind: "reply"; value: JsonObject; native?: boolean }
  | { kind: "event"; value: JsonObject; native?: boolean };
