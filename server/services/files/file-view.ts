/**
 * The File object (docs/api/files.md) in its three variants: own storage (always downloadable), and a file on
 * OpenAI or Anthropic (id, size, date and downloadability as the provider reports them; the type
 * the gateway detected when it uploaded the file, else the provider's, else unknown).
 *
 * @module
 */
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { FileSchema, type File } from "../../../gen/gateway/v1/files_pb.js";
import type { ProviderFile } from "../../engine/providers/files-api.js";
import type { FileRow } from "./file-store.js";

const UNKNOWN_TYPE = "application/octet-stream";

export function ownFile(row: FileRow): File {
  return create(FileSchema, {
    id: row.id,
    type: "file",
    filename: row.filename,
    mimeType: row.mime_type,
    sizeBytes: BigInt(row.size_bytes),
    downloadable: true,
    createdAt: timestampFromDate(row.created_at),
  });
}

export function providerFile(file: ProviderFile, row: FileRow | undefined): File {
  return create(FileSchema, {
    id: file.id,
    type: "file",
    filename: file.filename || row?.filename || "",
    mimeType: row?.mime_type ?? file.mimeType ?? UNKNOWN_TYPE,
    sizeBytes: BigInt(file.sizeBytes),
    downloadable: file.downloadable,
    createdAt: timestampFromDate(file.createdAt),
  });
}

/** `attachment` with the name for every client: an ASCII fallback and the exact UTF-8 name (RFC 6266). */
export function contentDisposition(filename: string): string {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\]/g, "_");
  const exact = encodeURIComponent(filename).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${fallback}"; filename*=UTF-8''${exact}`;
}
