/**
 * What both providers' Files APIs share: the multipart upload and the fields of their file objects.
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import { Readable } from "node:stream";
import type { JsonObject } from "@bufbuild/protobuf";
import type { FileUpload } from "./files-api.js";
import type { UpstreamTarget } from "./provider.js";
import { callUpstream, readJsonObject } from "./upstream-http.js";

/**
 * A multipart/form-data body of text fields and one file part named `file`, streamed from the
 * file's body with an exact content-length (the file's size is known: uploads are spooled first).
 */
function multipartFileBody(
  fields: Record<string, string>,
  file: FileUpload,
): { contentType: string; length: number; data: Readable } {
  // A random boundary cannot occur in the content by chance.
  const boundary = `gateway-file-${randomUUID()}`;
  let head = "";
  for (const [name, value] of Object.entries(fields))
    head += `--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  head +=
    `--${boundary}\r\ncontent-disposition: form-data; name="file"; ` +
    `filename="${escapeQuoted(file.filename)}"\r\ncontent-type: ${file.mimeType}\r\n\r\n`;
  const tail = `\r\n--${boundary}--\r\n`;
  async function* parts(): AsyncGenerator<Uint8Array> {
    yield Buffer.from(head);
    yield* file.body;
    yield Buffer.from(tail);
  }
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    length: Buffer.byteLength(head) + file.size + Buffer.byteLength(tail),
    data: Readable.from(parts(), { objectMode: false }),
  };
}

/** `POST {baseUrl}/files` of the file as multipart/form-data with `fields`; the provider's JSON answer. */
export async function postFile(
  target: UpstreamTarget,
  headers: Record<string, string>,
  fields: Record<string, string>,
  file: FileUpload,
  signal: AbortSignal,
): Promise<JsonObject> {
  const body = multipartFileBody(fields, file);
  const response = await callUpstream(
    target,
    {
      method: "POST",
      path: "/files",
      headers: { ...headers, "content-length": String(body.length) },
      body: { contentType: body.contentType, data: body.data },
    },
    signal,
  );
  return readJsonObject(response);
}

/** As browsers encode names in multipart headers (WHATWG): quote and line breaks percent-encoded. */
function escapeQuoted(value: string): string {
  return value.replace(/"/g, "%22").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}

export function dateFromUnixSeconds(value: unknown): Date {
  return new Date((typeof value === "number" && Number.isFinite(value) ? value : 0) * 1000);
}

export function sizeOf(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.trunc(value) : 0;
}
