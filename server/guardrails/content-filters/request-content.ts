import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import { gatewayError } from "../../../wire/errors.js";
import { isObject } from "../../providers/json-shape.js";
import type { ContentFilter } from "./content-filter.js";

/** Which request shape a body has: its text lives in different fields. */
export type ScannedShape = "chat" | "embeddings";

/** The filters of every guardrail that applies, with the flag filters that matched. */
export interface FilterVerdict {
  flagged: readonly ContentFilter[];
}

const CLEAN: FilterVerdict = { flagged: [] };

/**
 * Applies the content filters of every guardrail that governs the call to the input side of a
 * request body, in place, before any provider sees it: a block filter that matches refuses the
 * call (403 naming the guardrail and the filter, never the text), redact filters replace each
 * match by their label, flag filters let it through and are reported. Block wins over redact:
 * every text is checked against every block filter before anything is sent. The body belongs to
 * this call (parsed from its request), so rewriting it is safe, and it means nothing later in the
 * call (a stored generation, a log line) can hold what was redacted.
 */
export function filterRequest(filters: readonly ContentFilter[], shape: ScannedShape, body: JsonObject): FilterVerdict {
  if (filters.length === 0) return CLEAN;
  const flagged = new Set<ContentFilter>();
  const rewrite = (text: string): string => {
    let out = text;
    for (const filter of filters) {
      if (filter.action === "block") {
        if (filter.matches(text)) throw blocked(filter);
      } else if (filter.action === "flag") {
        if (!flagged.has(filter) && filter.matches(text)) flagged.add(filter);
      } else {
        out = filter.redact(out);
      }
    }
    return out;
  };
  if (shape === "chat") rewriteChat(body, rewrite);
  else if (body.input !== undefined) body.input = rewriteInput(body.input, rewrite);
  return flagged.size === 0 ? CLEAN : { flagged: [...flagged] };
}

function blocked(filter: ContentFilter) {
  return gatewayError(403, `Request blocked by guardrail '${filter.guardrail}': content filter '${filter.name}' matched the input`, { reason: "CONTENT_FILTERED" });
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
