import type { ServerResponse } from "node:http";
import type { Message } from "@bufbuild/protobuf";

/**
 * A server stream of `google.api.HttpBody` is one raw response body, as grpc-gateway renders it:
 * the content type of the first message, then the bytes of every message in order, written only as
 * fast as the client reads them. A stream that fails midway is cut off (the caller destroys the
 * response), so a client never takes a partial body for a whole one.
 */
type HttpBody = Message & { contentType: string; data: Uint8Array };

export async function writeHttpBodyStream(res: ServerResponse, status: number, headers: Record<string, string>, first: Message, rest: AsyncIterator<Message>): Promise<void> {
  res.writeHead(status, { ...headers, "content-type": (first as HttpBody).contentType || "application/octet-stream" });
  await write(res, (first as HttpBody).data);
  for (let next = await rest.next(); !next.done; next = await rest.next()) await write(res, (next.value as HttpBody).data);
  res.end();
}

function write(res: ServerResponse, data: Uint8Array): Promise<void> | void {
  if (data.length === 0 || res.write(data)) return;
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    // A client that went away aborts the call; the next read of the stream fails.
    res.on("close", done);
  });
}
