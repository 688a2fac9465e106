import type { JsonObject } from "@bufbuild/protobuf";

/** How much of a prompt's beginning decides its key: enough to tell conversations apart, cheap to hash. */
const PREFIX_CHARS = 1_024;

/**
 * The first PREFIX_CHARS characters of a request's text, in order: chat messages' text (string
 * contents and text parts), or an embeddings request's input. Providers cache prompts by their
 * beginning, so calls that share one should share a key.
 */
export function promptPrefix(body: JsonObject): string {
  let prefix = "";
  const add = (value: unknown): boolean => {
    if (typeof value === "string") prefix += value;
    else if (Array.isArray(value)) {
      for (const item of value)
        if (
          add(
            typeof item === "object" && item !== null && !Array.isArray(item)
              ? ((item as JsonObject).text ?? (item as JsonObject).content)
              : item,
          )
        )
          return true;
    } else if (typeof value === "object" && value !== null) add((value as JsonObject).content);
    return prefix.length >= PREFIX_CHARS;
  };
  add(body.messages ?? body.input);
  return prefix.slice(0, PREFIX_CHARS);
}
