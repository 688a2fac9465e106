import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { sendError } from "../../facade/error-response.js";

/**
 * Files the HTTP port serves from memory beside the API (the API docs page, the web console):
 * read once, answered with a strong ETag so that a revalidation costs a 304, and only to GET and
 * HEAD. The endpoints decide which names exist; nothing here touches the file system.
 */
export interface StaticAsset {
  body: Buffer;
  contentType: string;
  cacheControl: string;
  etag: string;
  extraHeaders?: Record<string, string>;
}

export function staticAsset(
  body: Buffer,
  contentType: string,
  cacheControl: string,
  extraHeaders?: Record<string, string>,
): StaticAsset {
  const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
  return { body, contentType, cacheControl, etag, ...(extraHeaders ? { extraHeaders } : {}) };
}

/** True for GET and HEAD; otherwise answers 405 with `allow` and returns false. */
export function allowGetAndHead(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.method === "GET" || req.method === "HEAD") return true;
  res.setHeader("allow", "GET, HEAD");
  sendError(res, {
    status: 405,
    message: `Method ${req.method} is not allowed on ${(req.url ?? "/").split("?", 1)[0]}; allowed: GET, HEAD`,
  });
  return false;
}

/** 200 with the asset (no body to HEAD), or 304 when the client holds this version. */
export function sendAsset(
  req: IncomingMessage,
  res: ServerResponse,
  found: StaticAsset,
  headers: Record<string, string> = {},
): void {
  const all = {
    ...headers,
    "content-type": found.contentType,
    "cache-control": found.cacheControl,
    etag: found.etag,
    "x-content-type-options": "nosniff",
    ...found.extraHeaders,
  };
  if (req.headers["if-none-match"] === found.etag) {
    res.writeHead(304, all);
    res.end();
    return;
  }
  res.writeHead(200, { ...all, "content-length": found.body.length });
  res.end(req.method === "HEAD" ? undefined : found.body);
}
