import { LineSplitter } from "../../../wire/line-splitter.js";
import { UpstreamError } from "./provider.js";

/**
 * The longest line of a JSONL body. A whole file may be gigabytes, but one line is one item's
 * answer: a chat completion of 32k tokens with 20 log-probability alternatives per token is about
 * 40 MB, anything else far less. Files are read by background work, a few at a time, so the
 * generous limit costs little; past it the line would never end.
 */
export const MAX_JSONL_LINE_BYTES = 64 * 1024 * 1024;

/**
 * Incremental line splitting for JSONL bodies (batch result files). Bytes may be split anywhere,
 * also inside a UTF-8 sequence; CRLF is accepted. Unlike an SSE event, a last line without its
 * newline is complete: JSONL files often end that way, and a truncated transfer is already an
 * error of the HTTP layer (content-length or chunked framing), not a clean end.
 *
 * A line past MAX_JSONL_LINE_BYTES fails as "protocol" and nothing more is read: the body's
 * iterator is closed, which destroys a response body.
 */
export async function* readLines(body: AsyncIterable<Uint8Array>): AsyncGenerator<string, void, undefined> {
  const lines = new LineSplitter(
    MAX_JSONL_LINE_BYTES,
    () =>
      new UpstreamError(
        "protocol",
        `a line of the upstream file is longer than ${MAX_JSONL_LINE_BYTES / 1024 / 1024} MiB`,
      ),
  );
  for await (const bytes of body) {
    for (const text of lines.push(bytes)) {
      const line = text.trim();
      if (line !== "") yield line;
    }
  }
  const last = lines.end()?.trim();
  if (last) yield last;
}
