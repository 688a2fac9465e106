import type { IncomingMessage } from "node:http";
import type { Readable } from "node:stream";
import {
  ScalarType,
  type DescField,
  type DescMessage,
  type DescMethodStreaming,
  type Message,
} from "@bufbuild/protobuf";
import { reflect } from "@bufbuild/protobuf/reflect";
import type { ConnectError, Transport } from "@connectrpc/connect";
import busboy from "busboy";
import { gatewayError, errorMessage } from "../wire/errors.js";
import { tooLarge } from "./body-reader.js";
import { decodeRequest } from "./request-decoder.js";
import type { Route } from "./route-table.js";

/**
 * The one hand-written route (docs/architecture.md): a client-streaming RPC bound to an HTTP rule takes
 * a multipart/form-data body, and the part named `file` is streamed into it, never held whole. The
 * RPC's request has a oneof of a metadata message and a bytes chunk: the first message is the
 * metadata, filled from the part's file name and content type and then, as for any route, from the
 * query parameters; every slice of the part follows as a chunk. The socket is read only as fast as
 * the core consumes the chunks, so a slow store slows the client down instead of filling memory.
 * The route's `(gateway.v1.max_body_bytes)` limits the file: the first byte over it stops the
 * reading and answers 413; a connection whose body was not read through is closed in stages after
 * the answer (unread-body.ts).
 */
export const FILE_FIELD = "file";
/** Fields of the upload's metadata message filled from the file part's headers, not from the query. */
export const PART_FILLED_FIELDS: readonly string[] = ["filename", "content_type"];
/** Room for the multipart framing, part headers and small text fields around the file itself. */
const MULTIPART_OVERHEAD_BYTES = 1024 * 1024;
const FILE_SUBJECT = "The file";

export interface UploadCall {
  transport: Transport;
  header: Headers;
  query: URLSearchParams;
  signal: AbortSignal;
}

export async function uploadMultipart(
  req: IncomingMessage,
  route: Route,
  call: UploadCall,
): Promise<{ message: Message; header: Headers }> {
  const method = route.method as DescMethodStreaming;
  const { metadata, chunk } = uploadFieldsOf(method.input);
  if (!/^multipart\/form-data\s*;/i.test(req.headers["content-type"] ?? "")) {
    throw gatewayError(
      400,
      `${route.verb} ${route.template} takes a multipart/form-data body with the file in the field '${FILE_FIELD}'`,
    );
  }
  const declared = Number(req.headers["content-length"] ?? NaN);
  if (declared > route.maxBodyBytes + MULTIPART_OVERHEAD_BYTES) throw tooLarge(route.maxBodyBytes, FILE_SUBJECT);

  const form = readForm(req, call.signal);
  try {
    const part = await form.file;
    const first = decodeRequest(route, {
      body: { [metadata.name]: { filename: part.filename, content_type: part.mimeType } },
      values: [],
      query: underField(call.query, metadata.name),
    });
    let refused: ConnectError | undefined;
    async function* messages(): AsyncGenerator<Message> {
      yield first;
      let size = 0;
      for await (const bytes of part.stream as AsyncIterable<Buffer>) {
        size += bytes.length;
        if (size > route.maxBodyBytes) throw (refused = tooLarge(route.maxBodyBytes, FILE_SUBJECT));
        const message = reflect(method.input);
        message.set(chunk, bytes);
        yield message.message;
      }
    }
    try {
      const response = await call.transport.stream(method, call.signal, undefined, call.header, messages());
      for await (const message of response.message) return { message, header: response.header };
      throw gatewayError(502, "The service ended the upload without a response");
    } catch (err) {
      throw refused ?? err;
    }
  } finally {
    form.stop();
  }
}

interface FilePart {
  stream: Readable;
  filename: string;
  mimeType: string;
}

/** Parses the body as it arrives; `file` resolves at the start of the `file` part. */
function readForm(req: IncomingMessage, signal: AbortSignal): { file: Promise<FilePart>; stop(): void } {
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: req.headers,
      defParamCharset: "utf8",
      limits: { fields: 50, fieldSize: 64 * 1024, parts: 100, headerPairs: 100 },
    });
  } catch (err) {
    throw gatewayError(400, `Malformed multipart Content-Type: ${errorMessage(err)}`);
  }
  let taken = false;
  const file = new Promise<FilePart>((resolve, reject) => {
    parser.on("file", (name: string, stream: Readable, info: busboy.FileInfo) => {
      // A part cut off by the client errors; whoever reads it learns so, and nobody else must crash.
      stream.on("error", () => undefined);
      if (name !== FILE_FIELD || taken) {
        stream.resume();
        return;
      }
      taken = true;
      resolve({ stream, filename: info.filename ?? "", mimeType: info.mimeType });
    });
    parser.on("field", (name: string) => {
      if (name === FILE_FIELD && !taken)
        reject(gatewayError(400, `The multipart field '${FILE_FIELD}' must be a file part (with a filename)`));
    });
    parser.on("error", (err: unknown) => reject(gatewayError(400, `Malformed multipart body: ${errorMessage(err)}`)));
    parser.on("close", () => reject(gatewayError(400, `The multipart body has no file in the field '${FILE_FIELD}'`)));
  });
  // A client that goes away ends the part with an error, so the core never takes a cut-off file for a whole one.
  const gone = () => parser.destroy(new Error("the client closed the connection during the upload"));
  signal.addEventListener("abort", gone, { once: true });
  req.on("error", gone);
  req.pipe(parser);
  return {
    file,
    stop() {
      signal.removeEventListener("abort", gone);
      if (req.complete) return;
      req.unpipe(parser);
      req.pause();
      parser.destroy();
    },
  };
}

/** The oneof members of a client-streaming upload request: the metadata message and the bytes chunk. */
export function uploadFieldsOf(schema: DescMessage): { metadata: DescField; chunk: DescField } {
  const members = schema.oneofs[0]?.fields ?? [];
  const metadata = members.find((f) => f.fieldKind === "message");
  const chunk = members.find((f) => f.fieldKind === "scalar" && f.scalar === ScalarType.BYTES);
  if (!metadata || !chunk)
    throw new Error(`${schema.typeName}: a multipart upload needs a oneof of a metadata message and a bytes chunk`);
  return { metadata, chunk };
}

/** Query parameters address fields of the metadata message, as `metadata.<name>` would. */
function underField(query: URLSearchParams, field: string): URLSearchParams {
  const scoped = new URLSearchParams();
  for (const [key, value] of query) scoped.append(key.startsWith(`${field}.`) ? key : `${field}.${key}`, value);
  return scoped;
}
