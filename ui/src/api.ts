import { storedKey } from "./session.js";

/**
 * The console's one REST client: every call goes to /api/v1 of the gateway that served the page,
 * with the session's key as a bearer token. A failed call throws an ApiError carrying the API's own
 * `error.message` (and `metadata.reason`), which the pages show as they are.
 */
export const API_BASE = "/api/v1";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly reason?: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export type Query = Record<string, string | number | boolean | undefined>;

export interface CallOptions {
  query?: Query;
  body?: unknown;
  /** A key other than the session's (the sign-in screen checks a pasted key before keeping it). */
  key?: string;
  signal?: AbortSignal;
}

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** Told when the session's key is refused (401): the shell signs out and says why. */
let onUnauthorized: ((error: ApiError) => void) | undefined;
export function setUnauthorizedHandler(handler: ((error: ApiError) => void) | undefined): void {
  onUnauthorized = handler;
}

export async function call<T>(method: Method, path: string, options: CallOptions = {}): Promise<T> {
  const res = await send(method, path, options, "application/json");
  return parse(await res.text()) as T;
}

/**
 * A POST answered by a server-sent event stream (the intern chat): its body to read with
 * `sseData` (sse.ts), or the parsed JSON when the API answered plain JSON instead (an intern's
 * steered reply). An error answer throws an ApiError, as `call` does.
 */
export async function postForStream(
  path: string,
  body: unknown,
  signal?: AbortSignal,
): Promise<{ stream: ReadableStream<Uint8Array> } | { json: unknown }> {
  const res = await send("POST", path, { body, ...(signal ? { signal } : {}) }, "text/event-stream, application/json");
  if (res.body && (res.headers.get("content-type") ?? "").startsWith("text/event-stream")) return { stream: res.body };
  return { json: parse(await res.text()) };
}

/** One request with the session's key; an answer that is not a success throws its ApiError. */
async function send(method: Method, path: string, options: CallOptions, accept: string): Promise<Response> {
  const key = options.key ?? storedKey();
  const headers: Record<string, string> = { accept };
  if (key) headers.authorization = `Bearer ${key}`;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  let res: Response;
  try {
    res = await fetch(API_BASE + path + queryString(options.query), {
      method,
      headers,
      body: options.body === undefined ? null : JSON.stringify(options.body),
      signal: options.signal ?? null,
      credentials: "omit",
      cache: "no-store",
    });
  } catch (err) {
    if (err instanceof DOMException && err.name === "AbortError") throw err;
    throw new ApiError(0, `The gateway did not answer (${err instanceof Error ? err.message : String(err)})`);
  }
  if (!res.ok) {
    const error = errorOf(res, parse(await res.text()));
    if (res.status === 401 && options.key === undefined) onUnauthorized?.(error);
    throw error;
  }
  return res;
}

export const api = {
  get: <T>(path: string, query?: Query, signal?: AbortSignal) =>
    call<T>("GET", path, { query, ...(signal ? { signal } : {}) }),
  post: <T>(path: string, body: unknown) => call<T>("POST", path, { body }),
  put: <T>(path: string, body: unknown) => call<T>("PUT", path, { body }),
  patch: <T>(path: string, body: unknown) => call<T>("PATCH", path, { body }),
  delete: <T>(path: string) => call<T>("DELETE", path),
};

function queryString(query: Query | undefined): string {
  if (!query) return "";
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  const text = params.toString();
  return text ? `?${text}` : "";
}

function parse(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The API's envelope `{"error": {"code", "message", "metadata"?: {"reason"}}}`, else the HTTP status. */
function errorOf(res: Response, body: unknown): ApiError {
  if (isRecord(body) && isRecord(body.error) && typeof body.error.message === "string") {
    const metadata = body.error.metadata;
    const reason = isRecord(metadata) && typeof metadata.reason === "string" ? metadata.reason : undefined;
    return new ApiError(res.status, body.error.message, reason);
  }
  return new ApiError(res.status, `The gateway answered ${res.status} ${res.statusText}`.trim());
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The text to show for anything a call or a page threw. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
