import http from "node:http";
import type { Reply } from "./http.js";

/** Multipart uploads to POST /api/v1/files as clients send them, and raw downloads. */

export interface UploadOptions {
  filename?: string;
  /** The part's declared content type (informative only for the gateway). */
  contentType?: string;
  query?: Record<string, string>;
}

/** An upload the way browsers and fetch send it (FormData, length known). */
export async function uploadFile(
  base: string,
  key: string,
  bytes: Uint8Array,
  options: UploadOptions = {},
): Promise<Reply> {
  const form = new FormData();
  form.append("purpose", "user_data");
  form.append(
    "file",
    new Blob([bytes], options.contentType ? { type: options.contentType } : {}),
    options.filename ?? "upload.bin",
  );
  const res = await fetch(`${base}/api/v1/files${queryOf(options.query)}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: parse(text), text };
}

export interface StreamedUpload {
  status: number;
  body: unknown;
  headers: http.IncomingHttpHeaders;
  /** File bytes written before the answer arrived (all of them when it came after the end). */
  sentBeforeAnswer: number;
}

export interface StreamOptions extends UploadOptions {
  /** The first bytes of the file (e.g. a format header); the rest is `fill`, or `pattern` repeated. */
  head?: Uint8Array;
  fill?: number;
  pattern?: Buffer;
  size: number;
  /** Sent as the request's content-length instead of none (chunked). */
  declaredLength?: number;
}

const CHUNK = 64 * 1024;

/**
 * A file of `size` bytes streamed as a multipart body without ever holding it (one reusable chunk),
 * honouring backpressure; resolves with the answer, which may come before the body has been sent.
 */
export function streamUpload(base: string, key: string, options: StreamOptions): Promise<StreamedUpload> {
  const { req, framing } = openUpload(base, key, options);
  let sent = 0;
  let answered = false;
  return new Promise((resolve, reject) => {
    req.on("response", (res) => {
      answered = true;
      const sentBeforeAnswer = sent;
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      const done = () =>
        resolve({ status: res.statusCode ?? 0, body: parse(text), headers: res.headers, sentBeforeAnswer });
      res.on("end", done);
      // The server may close the connection right after its answer; what arrived is the answer.
      res.on("error", done);
      res.on("aborted", done);
    });
    // Writes fail once the server has closed the socket; only a missing answer is a failure.
    req.on("error", (err) => {
      if (!answered) reject(err);
    });
    req.write(framing.head);
    const chunks = fileChunks(options);
    const pump = () => {
      for (let next = chunks.next(); !answered && !req.destroyed; next = chunks.next()) {
        if (next.done) {
          req.end(framing.tail);
          return;
        }
        sent += next.value.length;
        if (!req.write(next.value)) {
          req.once("drain", pump);
          return;
        }
      }
    };
    pump();
  });
}

/**
 * An upload that stops sending after `pauseAfter` file bytes, keeping the connection open, until
 * `cut()` destroys it mid-part: a client that goes away during the upload.
 */
export function pausedUpload(
  base: string,
  key: string,
  options: StreamOptions & { pauseAfter: number },
): { paused: Promise<void>; cut(): Promise<void> } {
  const { req, framing } = openUpload(base, key, options);
  req.on("error", () => undefined);
  const closed = new Promise<void>((resolve) => req.on("close", () => resolve()));
  const paused = new Promise<void>((resolve) => {
    req.write(framing.head);
    const chunks = fileChunks(options);
    let sent = 0;
    const pump = () => {
      for (let next = chunks.next(); !next.done && sent < options.pauseAfter; next = chunks.next()) {
        sent += next.value.length;
        if (!req.write(next.value)) {
          req.once("drain", pump);
          return;
        }
      }
      resolve();
    };
    pump();
  });
  return {
    paused,
    cut() {
      req.destroy();
      return closed;
    },
  };
}

function openUpload(
  base: string,
  key: string,
  options: StreamOptions,
): { req: http.ClientRequest; framing: { head: Buffer; tail: Buffer } } {
  const url = new URL(`${base}/api/v1/files${queryOf(options.query)}`);
  const boundary = "----gateway-test-boundary";
  const framing = {
    head: Buffer.from(
      `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="${options.filename ?? "big.bin"}"\r\n` +
        `content-type: ${options.contentType ?? "application/octet-stream"}\r\n\r\n`,
    ),
    tail: Buffer.from(`\r\n--${boundary}--\r\n`),
  };
  const headers: http.OutgoingHttpHeaders = {
    authorization: `Bearer ${key}`,
    "content-type": `multipart/form-data; boundary=${boundary}`,
  };
  if (options.declaredLength !== undefined) headers["content-length"] = options.declaredLength;
  const req = http.request({
    host: url.hostname,
    port: url.port,
    method: "POST",
    path: url.pathname + url.search,
    headers,
  });
  return { req, framing };
}

function* fileChunks({ head, fill = 0, pattern, size }: StreamOptions): Generator<Uint8Array> {
  // A whole number of patterns per block keeps the repetition seamless across blocks.
  const block = pattern
    ? Buffer.alloc(Math.max(1, Math.floor(CHUNK / pattern.length)) * pattern.length, pattern)
    : Buffer.alloc(CHUNK, fill);
  let remaining = size;
  if (head) {
    const first = head.subarray(0, Math.min(head.length, remaining));
    yield first;
    remaining -= first.length;
  }
  while (remaining > 0) {
    const length = Math.min(block.length, remaining);
    yield length === block.length ? block : block.subarray(0, length);
    remaining -= length;
  }
}

export interface Download {
  status: number;
  headers: Headers;
  bytes: Buffer;
}

export async function downloadFile(
  base: string,
  key: string,
  id: string,
  query?: Record<string, string>,
): Promise<Download> {
  const res = await fetch(`${base}/api/v1/files/${encodeURIComponent(id)}/content${queryOf(query)}`, {
    headers: { authorization: `Bearer ${key}` },
  });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

function queryOf(query: Record<string, string> | undefined): string {
  return query && Object.keys(query).length > 0 ? `?${new URLSearchParams(query)}` : "";
}

function parse(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}
