import type http from "node:http";
import type { Json } from "./mock-wire.js";

/**
 * What every wire format of the mock upstream shares: the rules a test steers it with, the reply
 * plan (the words, the token counts and the finish of one answer, from which each format renders
 * its own JSON and stream) and the stream writer that honours a rule's cuts, errors and pauses.
 */
export interface MockRule {
  /** Upstream model id this rule applies to; undefined = all. */
  model?: string;
  /** Answer with this status and the provider's error body (unless `rawBody`). */
  status?: number;
  /** Seconds, sent as Retry-After with `status`. */
  retryAfter?: number;
  /** Before headers. */
  delayMs?: number;
  /** Never answer. */
  hang?: boolean;
  /** Answer (after `delayMs`) once this settles: a test holds requests until it has seen them pending. */
  until?: Promise<unknown>;
  /** Streaming: destroy the socket after N events. */
  cutAfterChunks?: number;
  /** Streaming: end the response cleanly after N events, without the stream's final event. */
  endAfterChunks?: number;
  /** Streaming: wait this long between events (lets a client go away mid-stream). */
  chunkDelayMs?: number;
  /** Streaming: after N events, send the provider's in-stream error event and end cleanly. */
  streamError?: { afterChunks: number; type?: string; message?: string };
  reply?: string;
  /** Thinking text: Anthropic `thinking` blocks, OpenAI-compatible `reasoning`. */
  reasoning?: string;
  /**
   * Reported counts. `prompt_tokens` counts every prompt token; of them, `cached_tokens` were read
   * from the prompt cache and `cache_write_tokens` written to it: OpenAI-compatible answers repeat
   * them in `prompt_tokens_details`, Anthropic's count them apart from `input_tokens`.
   */
  usage?: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number; cache_write_tokens?: number };
  toolCall?: { name: string; arguments: string };
  logprobs?: Array<{ token: string; logprob: number; top_logprobs: Array<{ token: string; logprob: number }> }>;
  /** Sent as the body instead of the normal answer (status `status` or 200, JSON content type). */
  rawBody?: string;
  /**
   * Top-level fields added to an answer in every format (a provider's own `citations`, …): the chat
   * completion and every stream chunk, the embeddings list, an Anthropic message (streamed: its
   * message_start), a Gemini answer (streamed: each one), a Converse answer, a Responses response
   * (streamed: the response of its events).
   */
  answerFields?: Json;
  /** Apply only to requests that present this credential (a key of a provider's pool). */
  key?: string;
  /** Apply to the next N matching requests only. */
  times?: number;
}

/** What one answer is about; batch items are answered from it as live calls are. */
export interface MockReplyInput {
  body: Json;
  model: string;
  rule: MockRule | undefined;
  id: number;
}

/**
 * One wire format's live calls: the paths it serves, the credential a request presents, its error
 * body, and its answer. mock-upstream.ts routes each request to the first route that matches,
 * answers 401 in the route's format when the credential is not one the mock accepts
 * (mock-wire.ts: `acceptedKey`), applies the rules, then calls `answer`.
 */
export interface MockRoute {
  /**
   * The upstream model the path names ("" when the body's `model` names it); undefined when this
   * route does not serve the path.
   */
  match(method: string, path: string): { model: string } | undefined;
  /**
   * The credential as the provider reads it (a header, a bearer token, a verified signature's key
   * id); undefined when none or invalid.
   */
  credential(req: http.IncomingMessage, rawBody: Buffer): string | undefined;
  /** An error answer in the provider's format (a rule's failure status, a bad body). */
  sendError(res: http.ServerResponse, status: number, message: string, headers?: http.OutgoingHttpHeaders): void;
  /** The provider's answer to a credential the mock does not accept (401 in its words). */
  refuse(res: http.ServerResponse, key: string | undefined): void;
  answer(x: Exchange): void;
}

/** One request being answered: what a route's `answer` receives. */
export interface Exchange {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  body: Json;
  model: string;
  rule: MockRule | undefined;
  id: number;
  exchange: { cutByUs: boolean };
}

export interface Plan {
  words: string[];
  reasoningWords: string[];
  toolCall: { name: string; arguments: string } | undefined;
  finish: "stop" | "length" | "tool_calls";
  promptTokens: number;
  completionTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

/**
 * One answer's plan. `chars` is the prompt's text length, from which the prompt tokens come:
 * by default counted in the OpenAI and Anthropic shapes (`messages`, `system`); a format with
 * other shapes counts its own.
 */
export function plan(
  body: Json,
  rule: MockRule | undefined,
  model: string,
  maxTokens: unknown,
  chars = promptChars(body),
): Plan {
  let words = splitWords(rule?.reply ?? `Hello from ${model}`);
  let finish: Plan["finish"] = "stop";
  let toolCall = rule?.toolCall;
  if (typeof maxTokens === "number" && maxTokens < words.length) {
    words = words.slice(0, Math.max(0, maxTokens));
    finish = "length";
    toolCall = undefined;
  } else if (toolCall) {
    finish = "tool_calls";
  }
  if (toolCall && rule?.reply === undefined) words = [];
  const reasoningWords = rule?.reasoning ? splitWords(rule.reasoning) : [];
  return {
    words,
    reasoningWords,
    toolCall,
    finish,
    promptTokens: rule?.usage?.prompt_tokens ?? Math.max(1, Math.ceil(chars / 4)),
    completionTokens:
      rule?.usage?.completion_tokens ??
      words.length + reasoningWords.length + (toolCall ? Math.ceil(toolCall.arguments.length / 4) : 0),
    cacheReadTokens: rule?.usage?.cached_tokens ?? 0,
    cacheWriteTokens: rule?.usage?.cache_write_tokens ?? 0,
  };
}

/** "Hello from x" → ["Hello ", "from ", "x"]: chunks that join back to the text. */
export function splitWords(text: string): string[] {
  return text === "" ? [] : text.split(/(?<=\s)(?=\S)/);
}

export function promptChars(body: Json): number {
  let chars = textLength(body.system);
  if (Array.isArray(body.messages)) {
    for (const message of body.messages) {
      if (typeof message === "object" && message !== null) chars += textLength((message as Json).content);
    }
  }
  return chars;
}

/** Characters of text content: a string, or text parts/blocks (tool_result blocks counted inside). */
function textLength(content: unknown): number {
  if (typeof content === "string") return content.length;
  if (!Array.isArray(content)) return 0;
  let chars = 0;
  for (const part of content) {
    if (typeof part !== "object" || part === null) continue;
    const p = part as Json;
    if (typeof p.text === "string") chars += p.text.length;
    else if (p.type === "tool_result") chars += textLength(p.content);
  }
  return chars;
}

export function parseObject(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return {};
  }
}

/**
 * A stream out (SSE, or binary frames with their content type): everything in one write on the fast
 * path; event by event when a rule cuts or ends the stream early, injects an error, or spaces the
 * events out.
 */
export function sendEvents(
  x: Exchange,
  events: Array<string | Buffer>,
  errorEvent: (type: string, message: string) => string | Buffer,
  contentType = "text/event-stream",
): void {
  const { res, rule } = x;
  res.writeHead(200, { "content-type": contentType, "cache-control": "no-cache" });
  if (
    rule?.cutAfterChunks === undefined &&
    rule?.endAfterChunks === undefined &&
    rule?.streamError === undefined &&
    !rule?.chunkDelayMs
  ) {
    res.end(
      events.every((event) => typeof event === "string")
        ? events.join("")
        : Buffer.concat(events.map((event) => Buffer.from(event))),
    );
    return;
  }
  const cutAt = rule.cutAfterChunks;
  const errorAt = rule.streamError?.afterChunks;
  const endAt = rule.endAfterChunks;
  let sent = 0;
  const next = (): void => {
    if (res.destroyed) return;
    if (cutAt !== undefined && sent >= cutAt) {
      x.exchange.cutByUs = true;
      res.flushHeaders();
      // end(), not destroy(): the N events already written still reach the client, then the
      // connection drops in the middle of the chunked body.
      res.socket?.end();
      return;
    }
    if (errorAt !== undefined && sent >= errorAt) {
      res.end(
        errorEvent(rule.streamError?.type ?? "api_error", rule.streamError?.message ?? "mock upstream stream error"),
      );
      return;
    }
    const data = events[sent];
    if (data === undefined || (endAt !== undefined && sent >= endAt)) {
      res.end();
      return;
    }
    sent += 1;
    res.write(data);
    if (rule.chunkDelayMs) setTimeout(next, rule.chunkDelayMs);
    else next();
  };
  next();
}

/** Deterministic values in [-1, 1] from an FNV-1a hash of the input, through xorshift32. */
export function mockVector(input: string | number[], dimensions: number): number[] {
  const text = typeof input === "string" ? input : JSON.stringify(input);
  let state = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) state = Math.imul(state ^ text.charCodeAt(i), 0x01000193) >>> 0;
  const vector: number[] = [];
  for (let i = 0; i < dimensions; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    vector.push(Number(((state / 0xffffffff) * 2 - 1).toFixed(6)));
  }
  return vector;
}
