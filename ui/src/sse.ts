/**
 * The console's one reader of a server-sent event stream (the intern chat): events are
 * blocks separated by a blank line; the `data:` lines of a block (joined by "\n") are its payload,
 * parsed as JSON; a block of comments only (`: keepalive`) carries nothing and is skipped. The
 * stream ends at `data: [DONE]` (or when the connection closes). Payloads are yielded as they
 * arrive, so a page can render each one before the next is read.
 */
export async function* sseData(stream: ReadableStream<Uint8Array>): AsyncGenerator<unknown, void, undefined> {
  const reader = stream.getReader();
  // Streaming decode: a character split between two reads arrives whole.
  const decoder = new TextDecoder();
  let buffered = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffered += done ? decoder.decode() : decoder.decode(value, { stream: true });
      const blocks = buffered.split(/\r?\n\r?\n/);
      // What follows the last blank line is a block still arriving (all of it once the stream ended).
      buffered = done ? "" : (blocks.pop() ?? "");
      for (const block of blocks) {
        const data = dataOf(block);
        if (data === undefined) continue;
        if (data === "[DONE]") return;
        yield JSON.parse(data) as unknown;
      }
      if (done) return;
    }
  } finally {
    // Stopping early (a `return`, a thrown error, the consumer leaving the loop) closes the connection.
    await reader.cancel().catch(() => undefined);
  }
}

/** The payload of one block; undefined for a block without `data:` lines (comments, blank). */
function dataOf(block: string): string | undefined {
  const data: string[] = [];
  for (const line of block.split(/\r?\n/)) {
    if (line.startsWith("data:")) data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
  }
  return data.length === 0 ? undefined : data.join("\n");
}
