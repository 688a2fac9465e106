import type { ServerResponse } from "node:http";

/**
 * Writes a piece of an answer and, when the response's buffer is full, waits until the client has
 * read it (`drain`) or gone (`close`): an answer is produced only as fast as its client reads it,
 * so a slow reader never makes the gateway hold a whole stream in memory. A client that went away
 * aborts the call, and the next read of the stream fails.
 */
export function writeRespectingDrain(res: ServerResponse, data: string | Uint8Array): Promise<void> | void {
  if (data.length === 0 || res.write(data)) return;
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}
