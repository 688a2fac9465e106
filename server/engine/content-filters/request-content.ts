import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { gatewayError } from "../../../wire/errors.js";
import { isObject } from "../providers/json-shape.js";
import type { ContentFilter } from "./content-filter.js";

/** Which request shape a body has: its text lives in different fields. */
export type ScannedShape = "chat" | "embeddings";

/** What the filters found in a body: the filters that matched, and the block filter that refuses it. */
export interface FilterVerdict {
  matched: ReadonlySet<ContentFilter>;
  blockedBy?: ContentFilter;
}

/**
 * Applies content filters to the input side of a request body, in place, before any provider
 * sees it: redact filters replace each match by their label, flag filters leave the text and are
 * reported, and a block filter that matches stops the walk (the caller refuses the call). Block
 * wins over redact: every text is checked against the block filters on what the client sent. The
 * body belongs to this call (parsed from its request), so rewriting it is safe, and it means
 * nothing later in the call (a stored generation, a log line) can hold what was redacted.
 */
export function filterRequest(filters: readonly ContentFilter[], shape: ScannedShape, body: JsonObject, matched = new Set<ContentFilter>()): FilterVerdict {
  const rewrite = (text: string): string => {
    let out = text;
    for (const filter of filters) {
      if (filter.action === "block") {
        if (filter.matches(text)) throw new Blocked(filter);
      } else if (filter.action === "flag") {
        if (!matched.has(filter) && filter.matches(text)) matched.add(filter);
      } else {
        const redacted = filter.redact(out);
        if (redacted !== out) matched.add(filter);
        out = redacted;
      }
    }
    return out;
  };
  try {
    if (shape === "chat") rewriteChat(body, rewrite);
    else if (body.input !== undefined) body.input = rewriteInput(body.input, rewrite);
  } catch (err) {
    if (!(err instanceof Blocked)) throw err;
    matched.add(err.filter);
    return { matched, blockedBy: err.filter };
  }
  return { matched };
}

/** The refusal of a blocked call: it names the guardrail and the filter, never the text. */
export function blockedError(filter: ContentFilter) {
  if (filter.unusable !== undefined) {
    return gatewayError(403, `Guardrail '${filter.guardrail}' has a content filter this gateway cannot apply (${filter.unusable}); update the guardrail`, { reason: "CONTENT_FILTERED" });
  }
  return gatewayError(403, `Request blocked by guardrail '${filter.guardrail}': content filter '${filter.name}' matched the input`, { reason: "CONTENT_FILTERED" });
}

/** Ends the walk at the first block. */
class Blocked {
  constructor(readonly filter: ContentFilter) {}
}

/** Message content (a string or text parts) and the arguments of the tool calls the messages carry. */
function rewriteChat(body: JsonObject, rewrite: (text: string) => string): void {
  if (!Array.isArray(body.messages)) return;
  for (const message of body.messages) {
    if (!isObject(message)) continue;
    const content = message.content;
    if (typeof content === "string") message.content = rewrite(content);
    else if (Array.isArray(content)) {
      for (const part of content) if (isObject(part) && typeof part.text === "string") part.text = rewrite(part.text);
    }
    if (!Array.isArray(message.tool_calls)) continue;
    for (const call of message.tool_calls) {
      const fn: unknown = isObject(call) ? call.function : undefined;
      if (isObject(fn) && typeof fn.arguments === "string") fn.arguments = rewrite(fn.arguments);
    }
  }
}

/** `input` of embeddings: a text or a list of texts (token arrays carry no text to scan). */
function rewriteInput(input: JsonValue, rewrite: (text: string) => string): JsonValue {
  if (typeof input === "string") return rewrite(input);
  if (Array.isArray(input)) return input.map((item) => (typeof item === "string" ? rewrite(item) : item));
  return input;
}
