import type { JsonObject } from "@bufbuild/protobuf";

/**
 * The one table between Anthropic's `stop_reason` and the chat format's `finish_reason`, read in
 * both directions: by the upstream adapter (Anthropic answer → chat) and by the Messages format
 * (chat answer → Anthropic client). Keys are the stop reasons the Messages API documents.
 * Several stop reasons share a finish reason, so going back from chat takes the first listed
 * one; the provider's own reason, when it travelled as `native_finish_reason`, wins over that.
 */
const FINISH_REASON_OF_STOP_REASON: Readonly<Record<string, string>> = {
  end_turn: "stop",
  stop_sequence: "stop",
  // The server paused a long-running turn; the client continues it, as after an end of turn.
  pause_turn: "stop",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  tool_use: "tool_calls",
  refusal: "content_filter",
};

/** A reason Anthropic may add later is still an answer that ended: "stop", not an error. */
export function finishReasonOf(stopReason: string): string {
  return Object.hasOwn(FINISH_REASON_OF_STOP_REASON, stopReason)
    ? (FINISH_REASON_OF_STOP_REASON[stopReason] ?? "stop")
    : "stop";
}

const STOP_REASON_OF_FINISH_REASON: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(FINISH_REASON_OF_STOP_REASON)
    .reverse()
    .map(([stop, finish]) => [finish, stop]),
);

/**
 * A chat choice's reason as Anthropic's: the provider's own when it was Anthropic's (it tells a
 * stop sequence from an end of turn), else the chat reason's counterpart; null while unfinished.
 */
export function stopReasonOf(choice: JsonObject): string | null {
  const native = choice.native_finish_reason;
  if (typeof native === "string" && Object.hasOwn(FINISH_REASON_OF_STOP_REASON, native)) return native;
  const finish = choice.finish_reason;
  if (typeof finish !== "string") return null;
  return Object.hasOwn(STOP_REASON_OF_FINISH_REASON, finish)
    ? (STOP_REASON_OF_FINISH_REASON[finish] ?? "end_turn")
    : "end_turn";
}
