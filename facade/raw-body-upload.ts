import type { IncomingMessage } from "node:http";
import { create, type DescMethodStreaming, type Message } from "@bufbuild/protobuf";
import type { ConnectError } from "@connectrpc/connect";
import { HttpBodySchema } from "../gen/google/api/httpbody_pb.js";
import { gatewayError } from "../wire/errors.js";
import { tooLarge } from "./body-reader.js";
import type { UploadCall } from "./multipart-upload.js";
import type { Route } from "./route-table.js";

/**
 * A client-streaming RPC whose input is `google.api.HttpBody` takes the raw request body, the
 * mirror of a server stream of HttpBody (http-body-stream.ts): the first message carries the
 * content type, every message a slice of the bytes as they arrive. The socket is read only as fast
 * as the core consumes the slices, so the facade never holds the body. The route's
 * `(gateway.v1.max_body_bytes)` is enforced as for a buffered body: a declared Content-Length over
 * it is refused before anything is read, and the first byte over it stops the reading (413). A
 * connection whose body was not read through is closed in stages after the answer (unread-body.ts).
 */
export async function uploadRawBody(
  req: IncomingMessage,
  route: Route,
  call: UploadCall,
): Promise<{ message: Message; header: Headers }> {
  const declared = Number(req.headers["content-length"] ?? NaN);
  if (declared > route.maxBodyBytes) throw tooLarge(route.maxBodyBytes);
  let refused: ConnectError | undefined;
  const contentType = req.headers["content-type"] ?? "";
  async function* slices(): AsyncGenerator<Message> {
    let size = 0;
    let first = true;
    // Not destroyed when the core stops early: the socket must still carry the answer.
    for await (const chunk of req.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > route.maxBodyBytes) throw (refused = tooLarge(route.maxBodyBytes));
      yield create(HttpBodySchema, { contentType: first ? contentType : "", data: chunk });
      first = false;
    }
    if (first) yield create(HttpBodySchema, { contentType });
  }
  try {
    const response = await call.transport.stream(
      route.method as DescMethodStreaming,
      call.signal,
      undefined,
      call.header,
      slices(),
    );
    for await (const message of response.message) return { message, header: response.header };
    throw gatewayError(502, "The service ended the call without a response");
  } catch (err) {
    throw refused ?? err;
  }
}
