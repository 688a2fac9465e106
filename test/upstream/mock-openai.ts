import { mockVector, plan, sendEvents, type Exchange, type MockReplyInput } from "./mock-plan.js";
import { sendJson, type Json } from "./mock-wire.js";

/**
 * OpenAI's wire format as the mock speaks it: chat completions, JSON and SSE (with reasoning, logprobs and a tool
 * call), and embeddings. The Responses API is mock-responses.ts; Azure's routes answer with these (mock-azure.ts).
 */

/** The parts of an OpenAI answer that its JSON and streamed forms share. */
function openAiAnswer(x: MockReplyInput) {
  const { body, model, rule } = x;
  const p = plan(body, rule, model, body.max_completion_tokens ?? body.max_tokens);
  const id = `chatcmpl-mock-${x.id}`;
  const created = Math.floor(Date.now() / 1000);
  const logprobs = body.logprobs === true ? (rule?.logprobs ?? defaultLogprobs(p.words, body.top_logprobs)) : undefined;
  const toolCall = p.toolCall ? { id: `call_mock_${x.id}`, type: "function", function: { ...p.toolCall } } : undefined;
  const usage = {
    prompt_tokens: p.promptTokens,
    completion_tokens: p.completionTokens,
    total_tokens: p.promptTokens + p.completionTokens,
    prompt_tokens_details: {
      cached_tokens: p.cacheReadTokens,
      ...(rule?.usage?.cache_write_tokens === undefined ? {} : { cache_write_tokens: p.cacheWriteTokens }),
    },
    completion_tokens_details: { reasoning_tokens: rule?.usage ? 0 : p.reasoningWords.length },
  };
  return { p, id, created, logprobs, toolCall, usage };
}

/** The non-streamed `chat.completion`. */
export function openAiCompletion(x: MockReplyInput): Json {
  const { p, id, created, logprobs, toolCall, usage } = openAiAnswer(x);
  const message: Json = { role: "assistant", content: p.words.length === 0 && toolCall ? null : p.words.join("") };
  if (p.reasoningWords.length > 0) message.reasoning = p.reasoningWords.join("");
  if (toolCall) message.tool_calls = [{ index: 0, ...toolCall }];
  return {
    id,
    object: "chat.completion",
    created,
    model: x.model,
    choices: [{ index: 0, message, logprobs: logprobs ? { content: logprobs } : null, finish_reason: p.finish }],
    usage,
    ...x.rule?.answerFields,
  };
}

/** `/chat/completions`: the completion as JSON, or streamed as chunks with `stream: true`. */
export function openAiChat(x: Exchange): void {
  const { body, model } = x;
  if (body.stream !== true) return sendJson(x.res, 200, openAiCompletion(x));
  const { p, id, created, logprobs, toolCall, usage } = openAiAnswer(x);
  const chunk = (delta: Json, extra: Json = {}) =>
    "data: " +
    JSON.stringify({
      id,
      object: "chat.completion.chunk",
      created,
      model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: null, ...extra }],
      ...x.rule?.answerFields,
    }) +
    "\n\n";
  const events = [chunk({ role: "assistant", content: "" })];
  for (const word of p.reasoningWords) events.push(chunk({ reasoning: word }));
  p.words.forEach((word, i) => {
    const last = i === p.words.length - 1;
    // One logprob entry per word; a rule's extra entries ride on the last word.
    const entries = logprobs ? (last ? logprobs.slice(i) : logprobs.slice(i, i + 1)) : undefined;
    events.push(chunk({ content: word }, entries ? { logprobs: { content: entries } } : {}));
  });
  if (toolCall) {
    const args = toolCall.function.arguments;
    const half = Math.ceil(args.length / 2);
    events.push(
      chunk({
        tool_calls: [
          { index: 0, id: toolCall.id, type: "function", function: { name: toolCall.function.name, arguments: "" } },
        ],
      }),
    );
    for (const part of [args.slice(0, half), args.slice(half)])
      if (part !== "") events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: part } }] }));
  }
  events.push(chunk({}, { finish_reason: p.finish }));
  const options = body.stream_options;
  if (typeof options === "object" && options !== null && (options as Json).include_usage === true) {
    events.push(
      `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [], usage })}\n\n`,
    );
  }
  events.push("data: [DONE]\n\n");
  sendEvents(x, events, (type, message) => `data: ${JSON.stringify({ error: { message, type, code: null } })}\n\n`);
}

function defaultLogprobs(words: string[], topLogprobs: unknown): Json[] {
  const alternatives = typeof topLogprobs === "number" ? topLogprobs : 0;
  return words.map((token, i) => {
    const logprob = -Number(((i + 1) / 10).toFixed(1));
    return {
      token,
      logprob,
      bytes: [...Buffer.from(token, "utf8")],
      top_logprobs: Array.from({ length: alternatives }, (_, k) => ({
        token: k === 0 ? token : `${token.trim()}_${k}`,
        logprob: logprob - k,
        bytes: [...Buffer.from(k === 0 ? token : `${token.trim()}_${k}`, "utf8")],
      })),
    };
  });
}

/** `/embeddings`: one mock vector per input. */
export function openAiEmbeddings(x: Exchange): void {
  const { body, model, rule, res } = x;
  const inputs = embeddingInputs(body.input);
  const dimensions = typeof body.dimensions === "number" && body.dimensions > 0 ? body.dimensions : 8;
  let chars = 0;
  for (const input of inputs) chars += typeof input === "string" ? input.length : input.length * 4;
  const promptTokens = rule?.usage?.prompt_tokens ?? Math.max(1, Math.ceil(chars / 4));
  sendJson(res, 200, {
    object: "list",
    data: inputs.map((input, index) => ({ object: "embedding", index, embedding: mockVector(input, dimensions) })),
    model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
    ...rule?.answerFields,
  });
}

function embeddingInputs(input: unknown): Array<string | number[]> {
  if (typeof input === "string") return [input];
  if (!Array.isArray(input)) return [];
  if (input.every((item) => typeof item === "number")) return [input as number[]];
  return input.filter((item): item is string | number[] => typeof item === "string" || Array.isArray(item));
}
