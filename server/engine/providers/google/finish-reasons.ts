/**
 * Gemini's `finishReason` as the chat format's `finish_reason`. A candidate that asked for a
 * function call finished with STOP as far as Gemini is concerned; chat calls that "tool_calls",
 * which the response codec decides from the parts, not from this table.
 *
 * @module
 */

const FINISH_REASON_OF_GEMINI: Readonly<Record<string, string>> = {
  STOP: "stop",
  MAX_TOKENS: "length",
  SAFETY: "content_filter",
  RECITATION: "content_filter",
  BLOCKLIST: "content_filter",
  PROHIBITED_CONTENT: "content_filter",
  SPII: "content_filter",
  IMAGE_SAFETY: "content_filter",
  IMAGE_PROHIBITED_CONTENT: "content_filter",
  IMAGE_RECITATION: "content_filter",
  // The model produced a call the API could not parse or did not offer: the turn ended without
  // an answer the client can act on, which chat can only call an error.
  MALFORMED_FUNCTION_CALL: "error",
  UNEXPECTED_TOOL_CALL: "error",
  TOO_MANY_TOOL_CALLS: "error",
};

/** LANGUAGE, OTHER, NO_IMAGE and reasons Gemini may add later still ended the answer: "stop". */
export function finishReasonOf(geminiReason: string): string {
  return Object.hasOwn(FINISH_REASON_OF_GEMINI, geminiReason)
    ? (FINISH_REASON_OF_GEMINI[geminiReason] ?? "stop")
    : "stop";
}
