import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { randomBytes } from "node:crypto";
import type { ChatResult } from "../chat-api.js";
import { isObject, stringOr } from "../json-shape.js";
import { UpstreamError, type UpstreamUsage } from "../provider.js";
import { finishReasonOf } from "./finish-reasons.js";
import { chatUsageJson, usageOfMetadata } from "./usage.js";
import { deltaChunk, usageChunk, type ChunkIdentity } from "../chat-chunks.js";
import { copyProviderAnswerFields } from "../provider-fields.js";

/**
 * The answer fields the translation reads; Gemini's others (`promptFeedback`, …) reach the chat
 * answer as they came.
 */
const ANSWER_FIELDS = new Set(["candidates", "usageMetadata", "modelVersion", "responseId"]);

/**
 * Gemini's GenerateContentResponse as chat's `chat.completion` (whole) and
 * `chat.completion.chunk`s (streamed), one candidate per choice.
 */

/** A non-streamed answer; `model` names it when Gemini does not (`modelVersion`). */
export function chatCompletionFromGemini(answer: JsonObject, model: string): ChatResult {
  const candidates = candidatesOf(answer);
  const ids = new CallIds();
  const choices = candidates.map((candidate, position) => {
    const { text, reasoning, calls } = partsOf(candidate, ids);
    const message: JsonObject = { role: "assistant", content: text === "" && calls.length > 0 ? null : text };
    if (reasoning !== "") message.reasoning = reasoning;
    if (calls.length > 0) message.tool_calls = calls.map((call, index) => ({ ...call, index }));
    const native = stringOr(candidate.finishReason, "STOP");
    return {
      index: indexOf(candidate, position),
      message,
      finish_reason: chatFinishReason(native, calls.length > 0),
      native_finish_reason: native,
      logprobs: null,
    };
  });
  const usage = usageOfMetadata(answer.usageMetadata);
  const body: JsonObject = {
    id: stringOr(answer.responseId, `gen-${ids.nonce}`),
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: stringOr(answer.modelVersion, model),
    choices,
  };
  if (usage) body.usage = chatUsageJson(usage);
  copyProviderAnswerFields(answer, ANSWER_FIELDS, body);
  return { body, usage };
}

/**
 * Streamed GenerateContentResponses → chat chunks, one event at a time. Gemini sends each function
 * call whole, so a call is one tool_calls chunk with its id, name and all of its arguments. The
 * answer is complete once every candidate it began has a finishReason.
 */
export class GeminiStreamTranslator implements ChunkIdentity {
  id = "";
  model: string;
  readonly created = Math.floor(Date.now() / 1000);
  private readonly ids = new CallIds();
  private tokens: UpstreamUsage | undefined;
  /** Per candidate index: how many tool calls it has sent, and whether it finished. */
  private readonly candidates = new Map<number, { calls: number; finished: boolean }>();

  constructor(model: string) {
    this.model = model;
  }

  get finished(): boolean {
    return this.candidates.size > 0 && [...this.candidates.values()].every((c) => c.finished);
  }

  usage(): UpstreamUsage | undefined {
    return this.tokens;
  }

  translate(data: JsonObject): JsonObject[] {
    if (this.id === "") this.id = stringOr(data.responseId, `gen-${this.ids.nonce}`);
    if (typeof data.modelVersion === "string") this.model = data.modelVersion;
    // Each event repeats the counts so far; the last one holds the totals.
    this.tokens = usageOfMetadata(data.usageMetadata) ?? this.tokens;
    // An event with only counts (after the finish) carries no candidates.
    const candidates = data.candidates === undefined && this.candidates.size > 0 ? [] : candidatesOf(data);
    const chunks: JsonObject[] = [];
    candidates.forEach((candidate, position) => {
      const index = indexOf(candidate, position);
      let state = this.candidates.get(index);
      if (!state) {
        state = { calls: 0, finished: false };
        this.candidates.set(index, state);
        chunks.push(this.chunk(index, { role: "assistant", content: "" }));
      }
      const { text, reasoning, calls } = partsOf(candidate, this.ids);
      if (reasoning !== "") chunks.push(this.chunk(index, { reasoning }));
      if (text !== "") chunks.push(this.chunk(index, { content: text }));
      for (const call of calls) {
        chunks.push(this.chunk(index, { tool_calls: [{ ...call, index: state.calls }] }));
        state.calls += 1;
      }
      if (typeof candidate.finishReason === "string" && !state.finished) {
        state.finished = true;
        chunks.push(this.chunk(index, {}, candidate.finishReason, state.calls > 0));
      }
    });
    for (const chunk of chunks) copyProviderAnswerFields(data, ANSWER_FIELDS, chunk);
    return chunks;
  }

  /** As OpenAI does with stream_options.include_usage: a last chunk with no choices. */
  end(): JsonObject[] {
    return this.tokens ? [usageChunk(this, chatUsageJson(this.tokens))] : [];
  }

  private chunk(index: number, delta: JsonObject, native?: string, called = false): JsonObject {
    return deltaChunk(
      this,
      delta,
      native === undefined ? undefined : { reason: chatFinishReason(native, called), native },
      index,
    );
  }
}

/**
 * Tool call ids: Gemini has none, chat needs one per call, unique across a conversation (clients
 * match results to calls by it), so each answer draws a nonce and numbers its calls.
 */
class CallIds {
  readonly nonce = randomBytes(6).toString("hex");
  private next = 0;

  take(): string {
    return `call_${this.nonce}_${this.next++}`;
  }
}

/** A candidate that called a function ended with STOP in Gemini's words; chat calls that tool_calls. */
function chatFinishReason(native: string, called: boolean): string {
  return called && native === "STOP" ? "tool_calls" : finishReasonOf(native);
}

/**
 * The answer's candidates. None at all, with a `promptFeedback.blockReason`, is Gemini refusing
 * the prompt: the request's fault, hence 400 with the reason.
 */
function candidatesOf(answer: JsonObject): JsonObject[] {
  const candidates = Array.isArray(answer.candidates) ? answer.candidates.filter(isObject) : [];
  if (candidates.length > 0) return candidates;
  const feedback = isObject(answer.promptFeedback) ? answer.promptFeedback : {};
  if (typeof feedback.blockReason === "string") {
    throw new UpstreamError("status", `Gemini blocked the prompt (${feedback.blockReason.slice(0, 60)})`, {
      status: 400,
    });
  }
  throw new UpstreamError("protocol", "the upstream answer has no candidates");
}

function indexOf(candidate: JsonObject, position: number): number {
  return typeof candidate.index === "number" && Number.isInteger(candidate.index) && candidate.index >= 0
    ? candidate.index
    : position;
}

/** A candidate's text, its thoughts (`thought: true` parts) and its calls as chat tool calls (without their index). */
function partsOf(candidate: JsonObject, ids: CallIds): { text: string; reasoning: string; calls: JsonObject[] } {
  const content = isObject(candidate.content) ? candidate.content : {};
  let text = "";
  let reasoning = "";
  const calls: JsonObject[] = [];
  for (const part of Array.isArray(content.parts) ? content.parts : []) {
    if (!isObject(part)) continue;
    if (typeof part.text === "string") {
      if (part.thought === true) reasoning += part.text;
      else text += part.text;
    } else if (isObject(part.functionCall)) {
      calls.push(toolCall(part.functionCall, part.thoughtSignature, ids));
    }
  }
  return { text, reasoning, calls };
}

/** The signature rides in Google's OpenAI-compatible place, from which chat-request.ts takes it back. */
function toolCall(call: JsonObject, signature: JsonValue | undefined, ids: CallIds): JsonObject {
  const out: JsonObject = {
    id: ids.take(),
    type: "function",
    function: { name: stringOr(call.name, ""), arguments: JSON.stringify(call.args ?? {}) },
  };
  if (typeof signature === "string") out.extra_content = { google: { thought_signature: signature } };
  return out;
}
