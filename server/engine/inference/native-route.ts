import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { ConnectError } from "@connectrpc/connect";
import type { NativeApi, NativeFormat } from "../providers/native-api.js";
import { providerFor } from "../providers/registry.js";
import type { UpstreamTarget } from "../providers/provider.js";

/**
 * A Responses or Messages call that an endpoint may serve natively (translated-chat.ts builds it,
 * chat-completions.ts runs it): each attempt whose provider speaks the format sends `body`, every
 * other attempt the chat translation. Which endpoint answers decides the form of the answer.
 */
export interface NativeRoute {
  format: NativeFormat;
  /**
   * What a native attempt sends: the client's body without the gateway's fields; the content
   * filters rewrite it in place.
   */
  body: JsonObject;
  /** Why chat cannot carry the request, if it cannot: a translated attempt fails with it. */
  untranslatable: ConnectError | undefined;
  /** The parts of the body whose text is the prompt (the worst-case estimate). */
  promptParts: readonly JsonValue[];
  answers: NativeAnswers;
}

/** The ids a native answer is given: the gateway's generation id, and the catalog model that answered. */
export interface NativeIds {
  generationId: string;
  model: string;
}

/**
 * What the pipeline needs to know of one format's answers, so that they pass through with only
 * the gateway's own rewrites: `model` (the catalog's id, as every answer shows), the `id` where
 * the format has no use for the provider's, and the call's `cost` on the usage.
 */
export interface NativeAnswers {
  /** Whether a cached answer is in this format (one stored by a translated attempt is a chat completion). */
  isNative(answer: JsonObject): boolean;
  /** A plain answer's rewrites. */
  rewrite(answer: JsonObject, ids: NativeIds): void;
  /** One stream event's rewrites. */
  rewriteEvent(event: JsonObject, ids: NativeIds): void;
  /** The event after which the stream is complete. */
  isTerminal(event: JsonObject): boolean;
  /** The event whose usage is the stream's final one (it gets the cost). */
  carriesUsage(event: JsonObject): boolean;
  /** The usage object of an answer or of the event that carries it, to add the cost to. */
  usageOf(answerOrEvent: JsonObject): JsonObject | undefined;
  /** The generated text of a plain answer, and of one event: estimates the tokens when the provider reports none. */
  text(answer: JsonObject): string;
  eventText(event: JsonObject): string;
  /** Gathers a stream's events into the plain answer they make (the cache stores only that form). */
  assembler(): NativeAssembler;
  /** A plain answer as the events of its stream (a streamed cache hit). */
  replay(answer: JsonObject): JsonObject[];
}

export interface NativeAssembler {
  add(event: JsonObject): void;
  /** The answer, once the terminal event is in; undefined when the events did not make one. */
  answer(): JsonObject | undefined;
}

/** A stream as it is read: the provider's stream, its iterator, and its first item (chunk or event). */
export interface OpenedStream<Opened, Item> {
  opened: Opened;
  items: AsyncIterator<Item>;
  first: IteratorResult<Item>;
}

/** The provider's own API for the format, when the target speaks it. */
export function nativeApiFor(route: NativeRoute | undefined, target: UpstreamTarget): NativeApi | undefined {
  if (!route) return undefined;
  const api = providerFor(target.kind).native[route.format];
  return api?.speaks(target) ? api : undefined;
}

/** The call's cost (USD) on an answer's usage, as translated answers and chat show it. */
export function addCost(answers: NativeAnswers, answerOrEvent: JsonObject | undefined, cost: number): void {
  const usage = answerOrEvent && answers.usageOf(answerOrEvent);
  if (usage) usage.cost = cost;
}
