/**
 * The `data:` payloads of a raw `text/event-stream` body, in order: parsed JSON, or the payload
 * text as is when it is not JSON (`[DONE]`). Comments (`: keepalive`) are skipped.
 */
export function sseData(text: string): unknown[] {
  const events: unknown[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    const data = block
      .split(/\r?\n/)
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(line.startsWith("data: ") ? 6 : 5))
      .join("\n");
    if (data === "") continue;
    try {
      events.push(JSON.parse(data) as unknown);
    } catch {
      events.push(data);
    }
  }
  return events;
}
