import type http from "node:http";
import { authorized, sendError, sendJson, type Json, type Provider } from "./mock-wire.js";

/**
 * The providers' Files APIs as the mock serves them, in memory: OpenAI `/v1/files` for any purpose
 * but `batch` (batch input files stay with mock-batches-openai.ts, whose routes take them), and the
 * Anthropic Files API (`/v1/files`, beta header required). As on the real services, OpenAI refuses to
 * hand back `user_data`/`assistants`/`vision` content, and Anthropic only hands back files marked
 * downloadable (tests add such a file, as a tool run would create it, with `mock.files.add`).
 */
export interface MockStoredFile {
  provider: Provider;
  id: string;
  filename: string;
  /** OpenAI only. */
  purpose: string;
  mimeType: string;
  bytes: Buffer;
  createdAt: Date;
  downloadable: boolean;
}

export interface MockFiles {
  /** Files held, both providers. */
  readonly stored: ReadonlyMap<string, MockStoredFile>;
  /** Uploads received (including ones later deleted). */
  readonly uploads: number;
  add(
    file: Pick<MockStoredFile, "provider" | "filename" | "mimeType" | "bytes"> &
      Partial<Pick<MockStoredFile, "purpose" | "downloadable">>,
  ): MockStoredFile;
}

const ANTHROPIC_FILES_BETA = "files-api-2025-04-14";
const OPENAI_NOT_DOWNLOADABLE = new Set(["assistants", "user_data", "vision"]);
const ROOT = { openai: "/openai/v1/files", anthropic: "/anthropic/v1/files" } as const;

export class MockFileStore implements MockFiles {
  readonly stored = new Map<string, MockStoredFile>();
  uploads = 0;
  private sequence = 0;

  add(
    file: Pick<MockStoredFile, "provider" | "filename" | "mimeType" | "bytes"> &
      Partial<Pick<MockStoredFile, "purpose" | "downloadable">>,
  ): MockStoredFile {
    this.sequence += 1;
    const id =
      file.provider === "openai" ? `file-user${this.sequence}` : `file_mock${String(this.sequence).padStart(6, "0")}`;
    // Distinct creation times keep "newest first" well defined.
    const stored: MockStoredFile = {
      purpose: "user_data",
      downloadable: false,
      ...file,
      id,
      createdAt: new Date(Date.UTC(2026, 0, 1) + this.sequence * 1000),
    };
    this.stored.set(id, stored);
    return stored;
  }

  /** Ids keep counting: a provider never hands out a file id twice. */
  reset(): void {
    this.stored.clear();
    this.uploads = 0;
  }
}

/** Serves a Files API request; false when it is not one (or an OpenAI batch file: the batch routes take it). */
export function handleFileRoute(
  store: MockFileStore,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  raw: Buffer,
): boolean {
  const [path = "", search = ""] = (req.url ?? "").split("?", 2);
  const provider: Provider | undefined = path.startsWith(ROOT.openai)
    ? "openai"
    : path.startsWith(ROOT.anthropic)
      ? "anthropic"
      : undefined;
  if (!provider) return false;
  const rest = path.slice(ROOT[provider].length);
  const match = /^(?:\/([^/]+))?(\/content)?$/.exec(rest);
  if (!match) return false;
  const id = match[1] === undefined ? undefined : decodeURIComponent(match[1]);
  const content = match[2] !== undefined;
  const file = id === undefined ? undefined : store.stored.get(id);
  const form =
    req.method === "POST" && id === undefined ? multipartFields(req.headers["content-type"] ?? "", raw) : undefined;
  // Batch input files, and the content and deletion of the files batches made, belong to the batch mock.
  if (
    provider === "openai" &&
    (form?.fields.get("purpose") === "batch" || (id !== undefined && !file && (content || req.method === "DELETE")))
  )
    return false;
  if (!authorized(provider, req, res)) return true;
  if (provider === "anthropic" && !(req.headers["anthropic-beta"] ?? "").includes(ANTHROPIC_FILES_BETA)) {
    sendError(res, provider, 400, `mock upstream: the Files API needs anthropic-beta: ${ANTHROPIC_FILES_BETA}`);
    return true;
  }
  if (req.method === "POST" && id === undefined) upload(store, provider, req, res, form);
  else if (req.method === "GET" && id === undefined) list(store, provider, new URLSearchParams(search), res);
  else if (!file || file.provider !== provider) sendError(res, provider, 404, `mock upstream: no file ${id ?? ""}`);
  else if (req.method === "GET" && !content) sendJson(res, 200, fileJson(file));
  else if (req.method === "GET") download(file, res);
  else if (req.method === "DELETE") {
    store.stored.delete(file.id);
    sendJson(
      res,
      200,
      provider === "openai" ? { id: file.id, object: "file", deleted: true } : { id: file.id, type: "file_deleted" },
    );
  } else sendError(res, provider, 404, `mock upstream: no route ${req.method} ${path}`);
  return true;
}

function upload(
  store: MockFileStore,
  provider: Provider,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  form: MultipartForm | undefined,
): void {
  const part = form?.file;
  if (!form || !part) return sendError(res, provider, 400, "mock upstream: expected multipart/form-data with a file");
  if (req.headers["content-length"] === undefined)
    return sendError(res, provider, 411, "mock upstream: uploads need a content-length");
  const purpose = form.fields.get("purpose");
  if (provider === "openai" && !purpose) return sendError(res, provider, 400, "mock upstream: purpose is required");
  store.uploads += 1;
  const file = store.add({
    provider,
    filename: part.filename,
    mimeType: part.contentType,
    bytes: part.bytes,
    ...(purpose ? { purpose } : {}),
  });
  sendJson(res, 200, fileJson(file));
}

function list(store: MockFileStore, provider: Provider, query: URLSearchParams, res: http.ServerResponse): void {
  const all = [...store.stored.values()]
    .filter((f) => f.provider === provider)
    .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
  const after = query.get(provider === "openai" ? "after" : "after_id");
  const start = after === null ? 0 : all.findIndex((f) => f.id === after) + 1;
  const limit = Number(query.get("limit") ?? 20);
  const page = all.slice(start, start + limit);
  const hasMore = start + limit < all.length;
  const data = page.map(fileJson);
  sendJson(
    res,
    200,
    provider === "openai"
      ? { object: "list", data, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null, has_more: hasMore }
      : { data, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null, has_more: hasMore },
  );
}

function download(file: MockStoredFile, res: http.ServerResponse): void {
  const refused = file.provider === "openai" ? OPENAI_NOT_DOWNLOADABLE.has(file.purpose) : !file.downloadable;
  if (refused) {
    return sendError(
      res,
      file.provider,
      400,
      file.provider === "openai"
        ? `Not allowed to download files of purpose: ${file.purpose}`
        : "mock upstream: this file is not downloadable",
    );
  }
  res.writeHead(200, {
    "content-type": file.provider === "openai" ? "application/octet-stream" : file.mimeType,
    "content-length": file.bytes.length,
  });
  res.end(file.bytes);
}

function fileJson(file: MockStoredFile): Json {
  if (file.provider === "openai") {
    return {
      id: file.id,
      object: "file",
      bytes: file.bytes.length,
      created_at: Math.floor(file.createdAt.getTime() / 1000),
      filename: file.filename,
      purpose: file.purpose,
    };
  }
  return {
    id: file.id,
    type: "file",
    filename: file.filename,
    mime_type: file.mimeType,
    size_bytes: file.bytes.length,
    created_at: file.createdAt.toISOString(),
    downloadable: file.downloadable,
  };
}

interface FilePart {
  filename: string;
  contentType: string;
  bytes: Buffer;
}

interface MultipartForm {
  fields: Map<string, string>;
  file: FilePart | undefined;
}

/** multipart/form-data, binary-safe: text fields, and the part named `file`. */
function multipartFields(contentType: string, raw: Buffer): MultipartForm | undefined {
  const boundary = /boundary="?([^";]+)"?/i.exec(contentType)?.[1];
  if (!contentType.startsWith("multipart/form-data") || !boundary) return undefined;
  const delimiter = Buffer.from(`--${boundary}`);
  const fields = new Map<string, string>();
  let file: FilePart | undefined;
  let at = raw.indexOf(delimiter);
  while (at !== -1) {
    const start = at + delimiter.length;
    if (raw.subarray(start, start + 2).toString() === "--") break;
    const next = raw.indexOf(delimiter, start);
    if (next === -1) return undefined;
    const part = raw.subarray(start + 2, next - 2);
    const split = part.indexOf("\r\n\r\n");
    if (split === -1) return undefined;
    const headers = part.subarray(0, split).toString("utf8");
    const body = part.subarray(split + 4);
    const name = /name="([^"]*)"/i.exec(headers)?.[1];
    const filename = /filename="([^"]*)"/i.exec(headers)?.[1];
    if (name === "file" && filename !== undefined) {
      file = {
        filename,
        contentType: /content-type:\s*([^\r\n]+)/i.exec(headers)?.[1] ?? "application/octet-stream",
        bytes: Buffer.from(body),
      };
    } else if (name !== undefined) {
      fields.set(name, body.toString("utf8"));
    }
    at = next;
  }
  return { fields, file };
}
