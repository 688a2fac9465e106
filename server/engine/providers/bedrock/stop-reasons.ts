/**
 * Bedrock's `stopReason` (Converse and the stream's messageStop) as the chat format's
 * `finish_reason`. Keys are the reasons the Converse API documents; the two filters (a guardrail
 * that intervened, a model's own content filter) are chat's `content_filter`.
 *
 * @module
 */

const FINISH_REASON_OF_STOP_REASON: Readonly<Record<string, string>> = {
  end_turn: "stop",
  stop_sequence: "stop",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  tool_use: "tool_calls",
  guardrail_intervened: "content_filter",
  content_filtered: "content_filter",
};

/** A reason Bedrock may add later is still an answer that ended: "stop", not an error. */
export function finishReasonOf(stopReason: string): string {
  return Object.hasOwn(FINISH_REASON_OF_STOP_REASON, stopReason)
    ? (FINISH_REASON_OF_STOP_REASON[stopReason] ?? "stop")
    : "stop";
}
