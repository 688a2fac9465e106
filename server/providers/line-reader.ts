/**
 * Incremental line splitting for JSONL bodies (batch result files). Bytes may be split anywhere,
 * also inside a UTF-8 sequence; CRLF is accepted. Unlike an SSE event, a last line without its
 * newline is complete: JSONL files often end that way, and a truncated transfer is already an
 * error of the HTTP layer (content-length or chunked framing), not a clean end.
 */
export async function* readLines(body: AsyncIterable<Uint8Array>): AsyncGenerator<string, void, undefined> {
  const decoder = new TextDecoder();
  let pending = "";
  for await (const bytes of body) {
    pending += decoder.decode(bytes, { stream: true });
    let start = 0;
    for (let end = pending.indexOf("\n", start); end !== -1; end = pending.indexOf("\n", start)) {
      const line = pending.slice(start, end).trim();
      start = end + 1;
      if (line !== "") yield line;
    }
    pending = start === 0 ? pending : pending.slice(start);
  }
  const last = (pending + decoder.decode()).trim();
  if (last !== "") yield last;
}
