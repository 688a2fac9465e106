import { create, fromJson, type JsonObject, type JsonValue, type MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import {
  ChatCompletionChunkSchema,
  ChatCompletionEventSchema,
  ChatCompletionRequestSchema,
  ChatCompletionSchema,
  ChatUsageSchema,
  type ChatCompletion,
  type ChatCompletionChunk,
  type ChatCompletionRequest,
  type ChatUsage,
} from "../../gen/gateway/v1/inference_pb.js";
import { gatewayError } from "../../wire/errors.js";
import { costUsd, usdNumber } from "../core/money.js";
import type { Pricing } from "../catalog/catalog.js";
import { wireJson } from "../../wire/json.js";
import { providerFor } from "../providers/registry.js";
import { UpstreamError, type UpstreamUsage } from "../providers/provider.js";
import { estimatePromptTokens } from "./cost-estimate.js";
import { InferenceCall, type InferenceRuntime, type Served } from "./inference-call.js";
import { parametersIn, sessionIdOf, withoutGatewayFields } from "./request-fields.js";

/**
 * POST /chat/completions: the OpenAI wire format in and out, whatever the provider speaks. A
 * non-streamed call yields one `completion`; a streamed one yields the provider's chunks under
 * our generation id, then a final chunk with the usage and its cost. The route may fall back to
 * another endpoint until the first chunk has arrived; after that a failure ends the stream with an
 * error event (the facade writes it without `[DONE]`).
 */
type ChatEvent = MessageInitShape<typeof ChatCompletionEventSchema>;

export async function* chatCompletions(runtime: InferenceRuntime, req: ChatCompletionRequest, ctx: HandlerContext): AsyncGenerator<ChatEvent> {
  const body = wireJson(ChatCompletionRequestSchema, req, { compact: true }) as JsonObject;
  const upstreamBody = withoutGatewayFields(body);
  const serverTools = checkTools(req);
  const promptTokens = estimatePromptTokens([...((body.messages as JsonValue[] | undefined) ?? []), ...((body.tools as JsonValue[] | undefined) ?? [])]);
  const streamed = req.stream === true;
  const call = await InferenceCall.open(runtime, ctx, {
    api: "chat",
    modelIds: [req.model, ...req.models],
    preferences: req.provider,
    parameters: parametersIn(upstreamBody),
    user: req.user,
    sessionId: sessionIdOf(req.sessionId, ctx),
    promptTokens,
    completionTokens: req.maxCompletionTokens ?? req.maxTokens,
    serverTools,
    streamed,
  });
  try {
    if (streamed) yield* stream(call, upstreamBody, promptTokens);
    else yield { event: { case: "completion", value: await complete(call, upstreamBody, promptTokens) } };
  } finally {
    call.close();
  }
}

async function complete(call: InferenceCall, body: JsonObject, promptTokens: number): Promise<ChatCompletion> {
  const served = await call.attempt(async (target) => {
    const result = await providerFor(target.kind).chat.chat(target, body, call.signal);
    // Parsed inside the attempt: a malformed answer is a provider failure that may fall back.
    return { completion: parse(() => fromJson(ChatCompletionSchema, result.body, { ignoreUnknownFields: true })), usage: result.usage };
  });
  const { completion } = served.value;
  const usage = served.value.usage ?? estimatedUsage(promptTokens, completion.choices.map((c) => c.message?.content ?? "").join(""));
  // `model` is still the provider's own here, for the attempt's span.
  const cost = call.settle(served, { status: "success", httpStatus: 200, usage, latencyMs: served.latencyMs, generationMs: served.latencyMs, responseModel: completion.model });
  completion.id = call.generationId;
  completion.object = "chat.completion";
  completion.model = served.attempt.model.id;
  completion.provider = served.attempt.endpoint.providerName;
  completion.usage = chatUsage(usage, cost, served.attempt.endpoint.pricing, served.isByok);
  return completion;
}

async function* stream(call: InferenceCall, body: JsonObject, promptTokens: number): AsyncGenerator<ChatEvent> {
  const served = await call.attempt(async (target) => {
    const opened = await providerFor(target.kind).chat.chatStream(target, body, call.signal);
    const chunks = opened.chunks[Symbol.asyncIterator]();
    // Until the first chunk is in, a failure may still fall back to the next endpoint.
    return { opened, chunks, first: await chunks.next() };
  });
  const { opened, chunks, first } = served.value;
  const created = BigInt(Math.floor(Date.now() / 1000));
  const frame = (chunk: ChatCompletionChunk) => {
    chunk.id = call.generationId;
    chunk.object = "chat.completion.chunk";
    chunk.created = created;
    chunk.model = served.attempt.model.id;
    chunk.provider = served.attempt.endpoint.providerName;
    return { event: { case: "chunk", value: chunk } } satisfies ChatEvent;
  };
  let delivered = "";
  let finished = false;
  try {
    for (let next = first; !next.done; next = await chunks.next()) {
      const chunk = parse(() => fromJson(ChatCompletionChunkSchema, withoutUsage(next.value), { ignoreUnknownFields: true }));
      if (chunk.choices.length === 0) continue;
      for (const choice of chunk.choices) delivered += choice.delta?.content ?? "";
      yield frame(chunk);
    }
    const usage = opened.usage() ?? estimatedUsage(promptTokens, delivered);
    const cost = call.settle(served, { status: "success", httpStatus: 200, usage, latencyMs: served.latencyMs, generationMs: elapsedSince(served), responseModel: providerModel(first) });
    finished = true;
    yield frame(create(ChatCompletionChunkSchema, { usage: chatUsage(usage, cost, served.attempt.endpoint.pricing, served.isByok) }));
  } catch (err) {
    finished = true;
    throw call.fail(err, served.attempt, served.isByok, served.startedAt, estimatedUsage(promptTokens, delivered));
  } finally {
    // The client went away while a chunk was on its way: the generator is closed without an error.
    if (!finished) {
      call.close();
      call.fail(new UpstreamError("aborted", "client disconnected"), served.attempt, served.isByok, served.startedAt, estimatedUsage(promptTokens, delivered));
    }
  }
}

/** Function tools need their definition; `svc:` tools are server tools, checked against the workspace. */
function checkTools(req: ChatCompletionRequest): string[] {
  const serverTools: string[] = [];
  for (const [index, tool] of req.tools.entries()) {
    if (tool.type === "function") {
      if (!tool.function) throw gatewayError(400, `tools[${index}].function is required when type is function`);
    } else if (tool.type.startsWith("svc:")) {
      serverTools.push(tool.type);
    } else {
      throw gatewayError(400, `tools[${index}].type must be function or a server tool (svc:…), got ${tool.type}`);
    }
  }
  return serverTools;
}

function chatUsage(usage: UpstreamUsage, cost: string, pricing: Pricing, isByok: boolean): ChatUsage {
  const total = usage.promptTokens + usage.completionTokens;
  const part = (promptTokens: number, completionTokens: number) => usdNumber(costUsd({ prompt: pricing.prompt, completion: pricing.completion }, { promptTokens, completionTokens }));
  return create(ChatUsageSchema, {
    promptTokens: BigInt(usage.promptTokens),
    completionTokens: BigInt(usage.completionTokens),
    totalTokens: BigInt(total),
    completionTokensDetails: { reasoningTokens: BigInt(usage.reasoningTokens) },
    promptTokensDetails: { cachedTokens: BigInt(usage.cachedTokens) },
    cost: usdNumber(cost),
    isByok,
    costDetails: {
      upstreamInferenceCost: usdNumber(cost),
      upstreamInferencePromptCost: part(usage.promptTokens, 0),
      upstreamInferenceCompletionsCost: part(0, usage.completionTokens),
    },
  });
}

/** When a provider reports no usage (or a stream broke), tokens are estimated from the text. */
function estimatedUsage(promptTokens: number, completion: string): UpstreamUsage {
  return { promptTokens, completionTokens: Math.ceil(completion.length / 4), reasoningTokens: 0, cachedTokens: 0 };
}

function withoutUsage(chunk: JsonObject): JsonObject {
  const { usage: _usage, ...rest } = chunk;
  return rest;
}

function parse<T>(decode: () => T): T {
  try {
    return decode();
  } catch (err) {
    throw new UpstreamError("protocol", `unexpected answer format (${err instanceof Error ? err.message.slice(0, 120) : "invalid"})`);
  }
}

/** The model the provider's first chunk names, if it does. */
function providerModel(first: IteratorResult<JsonObject>): string | undefined {
  const model = first.done === true ? undefined : first.value.model;
  return typeof model === "string" && model !== "" ? model : undefined;
}

function elapsedSince(served: Served<unknown>): number {
  return Math.round(performance.now() - served.startedAt);
}
