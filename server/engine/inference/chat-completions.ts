/**
 * The chat completions pipeline, on plain JSON in the OpenAI wire shape (README.md beside this
 * file): a validated request body in, the answer out as the provider sent it, with the gateway's
 * own fields set (`id`, `object`, `model`, `provider`, `usage` with its cost). Request fields the
 * gateway does not consume reach the provider untouched, answer fields it does not know reach the
 * client untouched. A non-streamed call yields one `completion`; a streamed one yields the
 * provider's chunks under our generation id, then a final chunk with the usage and its cost. The
 * route may fall back to another endpoint until the first chunk has arrived; after that a failure
 * ends the stream with an error event.
 *
 * @module
 */
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { ProviderPreferencesSchema } from "../../../gen/gateway/v1/inference_pb.js";
import { ChatCompletionChunkSchema, ChatCompletionSchema } from "../../../gen/gateway/v1/chat_answers_pb.js";
import { gatewayError } from "../../../wire/errors.js";
import { decodeWireJson } from "../../../wire/json-input.js";
import { GENERATION_ID_HEADER } from "../../../wire/generation-headers.js";
import { costUsd, promptCostUsd, usdNumber } from "../money/money.js";
import type { Pricing } from "../catalog/catalog.js";
import { providerFor } from "../providers/registry.js";
import { isObject } from "../providers/json-shape.js";
import { UpstreamError, type UpstreamUsage } from "../providers/provider.js";
import type { ChatResult, ChatStream } from "../providers/chat-api.js";
import type { NativeAnswer, NativeEvents } from "../providers/native-api.js";
import { answerShape } from "./answer-shape.js";
import { estimatePromptTokens, estimatedUsage } from "./cost-estimate.js";
import type { InferenceCall, Served } from "./inference-call.js";
import type { Engine } from "../engine.js";
import type { InferenceOutput } from "./inference-output.js";
import { parametersIn, sessionIdOf, withoutGatewayFields } from "./request-fields.js";
import { CallCache } from "../response-cache/call-cache.js";
import { CompletionAssembler, replayChunks } from "../response-cache/chat-replay.js";
import { nativeApiFor, type NativeRoute, type OpenedStream } from "./native-route.js";
import { nativeFromCache, nativeReply, nativeStream } from "./native-answers.js";

/**
 * `body` has passed the chat request validator (request-validators.ts), which also normalized it.
 * With `native` (a Responses or Messages call), an endpoint whose provider speaks that format is
 * sent the client's own body instead, and answers in that format (outputs marked `native`); when
 * chat cannot carry the request, `body` holds only its routing fields.
 */
export async function* chatCompletions(
  engine: Engine,
  body: JsonObject,
  ctx: HandlerContext,
  native?: NativeRoute,
): AsyncGenerator<InferenceOutput> {
  const upstreamBody = withoutGatewayFields(body);
  const tools = arrayOf(body.tools);
  const serverTools = checkTools(tools);
  const promptTokens = estimatePromptTokens(native ? native.promptParts : [...arrayOf(body.messages), ...tools]);
  const streamed = body.stream === true;
  // Another format's calls are cached apart from chat's (the key names the format): their answers may be native.
  const cache = CallCache.of(engine, ctx, "chat", native ? { [native.format]: native.body } : upstreamBody);
  // An identical call may be waiting on this one's cache flight: it lands whatever happens, refusals included.
  const call = await engine
    .open(ctx, {
      api: "chat",
      // Both forms are filtered: whichever the endpoint that answers is sent.
      bodies: native ? (native.untranslatable ? [native.body] : [native.body, upstreamBody]) : [upstreamBody],
      modelIds: [stringOf(body.model) ?? "", ...(arrayOf(body.models) as string[])],
      preferences: isObject(body.provider) ? decodeWireJson(ProviderPreferencesSchema, body.provider) : undefined,
      parameters: parametersIn(upstreamBody),
      user: stringOf(body.user),
      sessionId: sessionIdOf(stringOf(body.session_id), ctx),
      promptTokens,
      completionTokens: numberOf(body.max_completion_tokens) ?? numberOf(body.max_tokens),
      serverTools,
      streamed,
      cache,
    })
    .catch((err: unknown) => {
      cache.land();
      throw err;
    });
  // A native answer may keep the provider's id: the generation id goes with the answer's head.
  if (native) ctx.responseHeader.set(GENERATION_ID_HEADER, call.generationId);
  try {
    if (call.cached && native?.answers.isNative(call.cached.answer))
      yield* nativeFromCache(call, native.answers, call.cached.answer, streamed);
    else if (call.cached) yield* fromCache(call, call.cached.answer, streamed);
    else if (streamed) yield* stream(call, upstreamBody, promptTokens, cache, native);
    else yield await complete(call, upstreamBody, promptTokens, cache, native);
  } finally {
    cache.land();
    call.close();
  }
}

/**
 * A cached answer, as a completion or replayed as chunks: its own `created` and token counts, our
 * generation id, and a cost of 0 (docs/cache.md).
 */
function* fromCache(call: InferenceCall, completion: JsonObject, streamed: boolean): Generator<InferenceOutput> {
  call.settleCached();
  completion.id = call.generationId;
  if (isObject(completion.usage))
    Object.assign(completion.usage, {
      cost: 0,
      is_byok: false,
      cost_details: {
        upstream_inference_completions_cost: 0,
        upstream_inference_cost: 0,
        upstream_inference_prompt_cost: 0,
      },
    });
  if (!streamed) {
    yield { kind: "reply", value: completion };
    return;
  }
  for (const chunk of replayChunks(completion)) {
    chunk.id = call.generationId;
    yield { kind: "event", value: chunk };
  }
}

/** What an attempt got: a chat answer, or (an endpoint that speaks the call's format) a native one. */
type Answered<Chat, Native> = { chat: Chat; native?: undefined } | { native: Native; chat?: undefined };

async function complete(
  call: InferenceCall,
  body: JsonObject,
  promptTokens: number,
  cache: CallCache,
  native: NativeRoute | undefined,
): Promise<InferenceOutput> {
  const served = await call.attempt(async (target): Promise<Answered<ChatResult, NativeAnswer>> => {
    const api = nativeApiFor(native, target);
    if (api && native) return { native: await api.answer(target, native.body, call.signal) };
    if (native?.untranslatable) throw native.untranslatable;
    const result = await providerFor(target.kind).chat.chat(target, body, call.signal);
    // Checked inside the attempt: a malformed answer is a provider failure that may fall back.
    checkChoices(result.body.choices, "message");
    return { chat: result };
  });
  const answered = served.value;
  if (answered.native && native)
    return {
      kind: "reply",
      value: nativeReply(call, { ...served, value: answered.native }, native.answers, promptTokens, cache),
      native: true,
    };
  if (!answered.chat)
    throw new UpstreamError("protocol", "an endpoint that does not speak the format answered natively");
  const result = answered.chat;
  const completion = result.body;
  const choices = completion.choices as JsonObject[];
  const usage = result.usage ?? estimatedUsage(promptTokens, choices.map((c) => textOf(c.message)).join(""));
  const cost = call.settle(served, {
    status: "success",
    httpStatus: 200,
    usage,
    latencyMs: served.latencyMs,
    generationMs: served.latencyMs,
    responseModel: stringOf(completion.model),
  });
  completion.id = call.generationId;
  completion.object = "chat.completion";
  if (typeof completion.created !== "number") completion.created = Math.floor(Date.now() / 1000);
  completion.model = served.attempt.model.id;
  completion.provider = served.attempt.endpoint.providerName;
  completion.usage = chatUsage(usage, cost, served.attempt.endpoint.pricing, served.isByok);
  completionShape(completion);
  cache.store(served.attempt, completion, usage, cost, completion.created as number);
  return { kind: "reply", value: completion };
}

async function* stream(
  call: InferenceCall,
  body: JsonObject,
  promptTokens: number,
  cache: CallCache,
  native: NativeRoute | undefined,
): AsyncGenerator<InferenceOutput> {
  const served = await call.attempt(
    async (target): Promise<Answered<OpenedStream<ChatStream, JsonObject>, OpenedStream<NativeEvents, JsonObject>>> => {
      const api = nativeApiFor(native, target);
      if (api && native) {
        const opened = await api.stream(target, native.body, call.signal);
        const items = opened.events[Symbol.asyncIterator]();
        return { native: { opened, items, first: await items.next() } };
      }
      if (native?.untranslatable) throw native.untranslatable;
      const opened = await providerFor(target.kind).chat.chatStream(target, body, call.signal);
      const items = opened.chunks[Symbol.asyncIterator]();
      // Until the first chunk is in, a failure may still fall back to the next endpoint.
      return { chat: { opened, items, first: await items.next() } };
    },
  );
  if (served.value.native && native) {
    yield* nativeStream(call, { ...served, value: served.value.native }, native.answers, promptTokens, cache);
    return;
  }
  if (!served.value.chat)
    throw new UpstreamError("protocol", "an endpoint that does not speak the format answered natively");
  const { opened, items: chunks, first } = served.value.chat;
  const created = Math.floor(Date.now() / 1000);
  const { generationId } = call;
  const model = served.attempt.model.id;
  const provider = served.attempt.endpoint.providerName;
  let delivered = "";
  let finished = false;
  // The completion the chunks make, for the cache.
  const assembled = cache.storing ? new CompletionAssembler() : undefined;
  try {
    for (let next = first; !next.done; next = await chunks.next()) {
      const chunk = next.value;
      checkChoices(chunk.choices, "delta");
      // The provider's usage chunk is replaced by ours, with the cost, at the end.
      const choices = chunk.choices as JsonObject[] | undefined;
      if (choices === undefined || choices.length === 0) continue;
      delete chunk.usage;
      for (const choice of choices) delivered += textOf(choice.delta);
      chunk.id = generationId;
      chunk.object = "chat.completion.chunk";
      chunk.created = created;
      chunk.model = model;
      chunk.provider = provider;
      chunkShape(chunk);
      assembled?.add(chunk);
      yield { kind: "event", value: chunk };
    }
    const usage = opened.usage() ?? estimatedUsage(promptTokens, delivered);
    const cost = call.settle(served, {
      status: "success",
      httpStatus: 200,
      usage,
      latencyMs: served.latencyMs,
      generationMs: elapsedSince(served),
      responseModel: first.done === true ? undefined : stringOf(first.value.model),
    });
    finished = true;
    const usageChunk: JsonObject = {
      id: generationId,
      object: "chat.completion.chunk",
      created,
      model,
      provider,
      choices: [],
      usage: chatUsage(usage, cost, served.attempt.endpoint.pricing, served.isByok),
    };
    if (assembled) cache.store(served.attempt, assembled.completion(usageChunk.usage ?? null), usage, cost, created);
    yield { kind: "event", value: usageChunk };
  } catch (err) {
    finished = true;
    throw call.fail(err, served.attempt, served.isByok, served.startedAt, estimatedUsage(promptTokens, delivered));
  } finally {
    // The client went away while a chunk was on its way: the generator is closed without an error.
    if (!finished) {
      call.close();
      call.fail(
        new UpstreamError("aborted", "client disconnected"),
        served.attempt,
        served.isByok,
        served.startedAt,
        estimatedUsage(promptTokens, delivered),
      );
    }
  }
}

const completionShape = answerShape(ChatCompletionSchema);
const chunkShape = answerShape(ChatCompletionChunkSchema);

/** Function tools need their definition; `svc:` tools are server tools, checked against the workspace. */
function checkTools(tools: readonly JsonValue[]): string[] {
  const serverTools: string[] = [];
  tools.forEach((tool, index) => {
    const type = isObject(tool) ? (stringOf(tool.type) ?? "") : "";
    if (type === "function") {
      if (!isObject((tool as JsonObject).function))
        throw gatewayError(400, `tools[${index}].function is required when type is function`);
    } else if (type.startsWith("svc:")) {
      serverTools.push(type);
    } else {
      throw gatewayError(400, `tools[${index}].type must be function or a server tool (svc:…), got ${type}`);
    }
  });
  return serverTools;
}

/** An answer's `choices` (a chunk may have none): objects, each with an object `message`/`delta` if any. */
function checkChoices(choices: JsonValue | undefined, part: "message" | "delta"): void {
  if (choices === undefined && part === "delta") return;
  if (!Array.isArray(choices))
    throw new UpstreamError("protocol", "unexpected answer format (choices is not an array)");
  for (const choice of choices) {
    if (!isObject(choice) || (choice[part] !== undefined && choice[part] !== null && !isObject(choice[part]))) {
      throw new UpstreamError("protocol", `unexpected answer format (a choice or its ${part} is not an object)`);
    }
  }
}

/**
 * The `usage` of an answer, in the shape the typed ChatUsage message renders to (every counter
 * present): tokens, their details, and the cost of the call with its prompt/completion split. The
 * prompt cost includes the cache reads and writes at their prices, so the two parts add up to the
 * cost (bar image and request prices).
 */
function chatUsage(usage: UpstreamUsage, cost: string, pricing: Pricing, isByok: boolean): JsonObject {
  const charged = usdNumber(cost);
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    completion_tokens_details: { audio_tokens: 0, image_tokens: 0, reasoning_tokens: usage.reasoningTokens },
    prompt_tokens_details: {
      audio_tokens: 0,
      cache_write_tokens: usage.cacheWriteTokens ?? 0,
      cached_tokens: usage.cachedTokens,
      file_tokens: 0,
      video_tokens: 0,
    },
    cost: charged,
    is_byok: isByok,
    cost_details: {
      upstream_inference_completions_cost: usdNumber(
        costUsd(
          { prompt: "0", completion: pricing.completion },
          { promptTokens: 0, completionTokens: usage.completionTokens },
        ),
      ),
      upstream_inference_cost: charged,
      upstream_inference_prompt_cost: usdNumber(promptCostUsd(pricing, usage)),
    },
  };
}

function textOf(part: JsonValue | undefined): string {
  return isObject(part) && typeof part.content === "string" ? part.content : "";
}

function arrayOf(value: JsonValue | undefined): readonly JsonValue[] {
  return Array.isArray(value) ? value : [];
}

function stringOf(value: JsonValue | undefined): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function numberOf(value: JsonValue | undefined): number | undefined {
  return typeof value === "number" ? value : undefined;
}

function elapsedSince(served: Served<unknown>): number {
  return Math.round(performance.now() - served.startedAt);
}
