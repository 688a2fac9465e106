/**
 * The answers of endpoints that speak a call's format themselves (native-route.ts), settled and
 * cached as chat answers are: the provider's JSON and events pass through with the gateway's own
 * rewrites only (NativeAnswers), the usage the provider reports is billed (estimated from the text
 * when it reports none), and the cost rides on the answer's usage. The cache keeps the plain form;
 * a streamed hit replays it as the format's events.
 *
 * @module
 */
import type { JsonObject } from "@bufbuild/protobuf";
import { usdNumber } from "../money/money.js";
import type { NativeAnswer, NativeEvents } from "../providers/native-api.js";
import { UpstreamError } from "../providers/provider.js";
import type { CallCache } from "../response-cache/call-cache.js";
import { estimatedUsage } from "./cost-estimate.js";
import type { InferenceCall, Served } from "./inference-call.js";
import type { InferenceOutput } from "./inference-output.js";
import { addCost, type NativeAnswers, type NativeIds, type OpenedStream } from "./native-route.js";

export function nativeReply(
  call: InferenceCall,
  served: Served<NativeAnswer>,
  answers: NativeAnswers,
  promptTokens: number,
  cache: CallCache,
): JsonObject {
  const answer = served.value.body;
  const usage = served.value.usage ?? estimatedUsage(promptTokens, answers.text(answer));
  const ids = idsOf(call, served);
  const cost = call.settle(served, {
    status: "success",
    httpStatus: 200,
    usage,
    latencyMs: served.latencyMs,
    generationMs: served.latencyMs,
    responseModel: modelOf(answer),
  });
  answers.rewrite(answer, ids);
  addCost(answers, answer, usdNumber(cost));
  cache.store(served.attempt, answer, usage, cost, Math.floor(Date.now() / 1000));
  return answer;
}

/**
 * The provider's events as they come. The event that carries the final usage is held until the
 * stream is complete, so that it can carry the cost too; a stream that breaks after it began is
 * settled with the tokens delivered and ends with the error event, as a chat stream does.
 */
export async function* nativeStream(
  call: InferenceCall,
  served: Served<OpenedStream<NativeEvents, JsonObject>>,
  answers: NativeAnswers,
  promptTokens: number,
  cache: CallCache,
): AsyncGenerator<InferenceOutput> {
  const { opened, items, first } = served.value;
  const ids = idsOf(call, served);
  const assembled = cache.storing ? answers.assembler() : undefined;
  let delivered = "";
  let finished = false;
  let held: JsonObject | undefined;
  let terminal: JsonObject | undefined;
  try {
    for (let next = first; !next.done; next = await items.next()) {
      const event = next.value;
      answers.rewriteEvent(event, ids);
      delivered += answers.eventText(event);
      assembled?.add(event);
      if (answers.isTerminal(event)) {
        terminal = event;
        break;
      }
      if (held) yield { kind: "event", value: held, native: true };
      held = undefined;
      if (answers.carriesUsage(event)) held = event;
      else yield { kind: "event", value: event, native: true };
    }
    if (!terminal) throw new UpstreamError("cut", "the upstream stream ended before its final event");
    // Read to the end: the provider's stream releases its connection only then.
    for (let next = await items.next(); !next.done; next = await items.next());
    const usage = opened.usage() ?? estimatedUsage(promptTokens, delivered);
    const cost = call.settle(served, {
      status: "success",
      httpStatus: 200,
      usage,
      latencyMs: served.latencyMs,
      generationMs: Math.round(performance.now() - served.startedAt),
    });
    finished = true;
    addCost(answers, answers.carriesUsage(terminal) ? terminal : held, usdNumber(cost));
    const answer = assembled?.answer();
    if (answer) cache.store(served.attempt, answer, usage, cost, Math.floor(Date.now() / 1000));
    if (held) yield { kind: "event", value: held, native: true };
    yield { kind: "event", value: terminal, native: true };
  } catch (err) {
    finished = true;
    throw call.fail(err, served.attempt, served.isByok, served.startedAt, estimatedUsage(promptTokens, delivered));
  } finally {
    // The client went away while an event was on its way: the generator is closed without an error.
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

/** A cached native answer: billed 0 (docs/cache.md), with this call's ids; replayed as events when streamed. */
export function* nativeFromCache(
  call: InferenceCall,
  answers: NativeAnswers,
  answer: JsonObject,
  streamed: boolean,
): Generator<InferenceOutput> {
  call.settleCached();
  answers.rewrite(answer, { generationId: call.generationId, model: modelOf(answer) ?? call.attempts[0]!.model.id });
  addCost(answers, answer, 0);
  if (!streamed) {
    yield { kind: "reply", value: answer, native: true };
    return;
  }
  for (const event of answers.replay(answer)) yield { kind: "event", value: event, native: true };
}

function idsOf(call: InferenceCall, served: Served<unknown>): NativeIds {
  return { generationId: call.generationId, model: served.attempt.model.id };
}

function modelOf(answer: JsonObject): string | undefined {
  return typeof answer.model === "string" ? answer.model : undefined;
}
