/**
 * The UploadFile client stream: its metadata message, then the content, whose rules are enforced
 * while it flows through (never by holding it): at most MAX_FILE_BYTES (413 at the first byte
 * over), not empty (400), an accepted type (400 as soon as the bytes rule it out).
 *
 * @module
 */
import { getOption } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { FilesService, type UploadFileMetadata, type UploadFileRequest } from "../../../gen/gateway/v1/files_pb.js";
import { max_body_bytes } from "../../../gen/gateway/v1/options_pb.js";
import { gatewayError } from "../../../wire/errors.js";
import { ContentTypeDetector } from "./content-type-detection.js";

/** The limit of the RPC's `(gateway.v1.max_body_bytes)`, which the REST facade enforces too. */
export const MAX_FILE_BYTES = Number(getOption(FilesService.method.uploadFile, max_body_bytes));

export interface OpenedUpload {
  metadata: UploadFileMetadata;
  chunks: AsyncIterable<Uint8Array>;
}

export async function openUpload(requests: AsyncIterable<UploadFileRequest>): Promise<OpenedUpload> {
  const iterator = requests[Symbol.asyncIterator]();
  const first = await next(iterator);
  if (first.done || first.value.part.case !== "metadata")
    throw gatewayError(400, "An upload starts with one metadata message, followed by the content in chunk messages");
  return { metadata: first.value.part.value, chunks: chunksOf(iterator) };
}

async function* chunksOf(iterator: AsyncIterator<UploadFileRequest>): AsyncGenerator<Uint8Array> {
  for (let message = await next(iterator); !message.done; message = await next(iterator)) {
    const { part } = message.value;
    if (part.case === "metadata")
      throw gatewayError(400, "An upload carries one metadata message, and only as its first message");
    if (part.case === "chunk" && part.value.length > 0) yield part.value;
  }
}

async function next(iterator: AsyncIterator<UploadFileRequest>): Promise<IteratorResult<UploadFileRequest>> {
  try {
    return await iterator.next();
  } catch (err) {
    if (err instanceof ConnectError) throw err;
    throw gatewayError(400, "The upload broke off before the file was complete");
  }
}

/** Passes content through while enforcing the rules; `mimeType` is known once it has ended. */
export class UploadContent {
  size = 0;
  mimeType: string | undefined;
  private readonly detector = new ContentTypeDetector();

  async *inspect(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
    for await (const chunk of chunks) {
      this.size += chunk.length;
      if (this.size > MAX_FILE_BYTES) throw fileTooLarge();
      await this.detector.push(chunk);
      yield chunk;
    }
    if (this.size === 0) throw gatewayError(400, "The file is empty");
    this.mimeType = await this.detector.finish();
  }
}

export function fileTooLarge(): ConnectError {
  return gatewayError(413, `The file exceeds the upload limit of ${MAX_FILE_BYTES} bytes`, {
    reason: "payload_too_large",
    retryable: false,
  });
}
