import type { JsonObject } from "@bufbuild/protobuf";

/**
 * The `chat.completion.chunk`s the stream translators of other wire formats write (anthropic/,
 * google/, bedrock/): every chunk of a stream carries one identity, a choice carries its delta and,
 * at its end, the finish reason in chat's words beside the provider's own, and the stream ends with
 * a chunk of no choices and the usage, as OpenAI sends it with `stream_options.include_usage`.
 */
export interface ChunkIdentity {
  id: string;
  model: string;
  /** Unix seconds. */
  created: number;
}

/** A choice's finish: chat's reason, and the provider's own (`native_finish_reason`). */
export interface ChunkFinish {
  reason: string;
  native: string;
}

export function deltaChunk(identity: ChunkIdentity, delta: JsonObject, finish?: ChunkFinish, index = 0): JsonObject {
  const choice: JsonObject = { index, delta, finish_reason: finish?.reason ?? null, logprobs: null };
  if (finish) choice.native_finish_reason = finish.native;
  return { ...base(identity), choices: [choice] };
}

export function usageChunk(identity: ChunkIdentity, usage: JsonObject): JsonObject {
  return { ...base(identity), choices: [], usage };
}

function base({ id, model, created }: ChunkIdentity): JsonObject {
  return { id, object: "chat.completion.chunk", created, model };
}
