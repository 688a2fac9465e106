import type { JsonObject } from "@bufbuild/protobuf";
import type { Readable } from "node:stream";
import { Agent, request, type Dispatcher } from "undici";
import { isObject } from "./json-shape.js";
import { UpstreamError, type UpstreamTarget } from "./provider.js";
import { readLines } from "./line-reader.js";
import { readSse, type SseEvent } from "./sse-reader.js";
import { providerErrorMessage, retryAfterSeconds, statusForErrorObject } from "./upstream-error-body.js";

/**
 * The HTTP plumbing every adapter shares: one keep-alive pool, the headers deadline, the caller's
 * cancellation, and the translation of transport outcomes into UpstreamError kinds. Messages
 * never carry request headers or keys; a provider's error text is scrubbed (upstream-error-body).
 */

// One pool for all catalog providers: connections are reused across requests and models.
const sharedAgent = new Agent({ keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000 });

/** Error bodies are only read for their message; a proxy's HTML page needs no more than this. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

export interface UpstreamResponse {
  status: number;
  headers: Dispatcher.ResponseData["headers"];
  body: Dispatcher.ResponseData["body"];
  /** The caller's signal; aborting it destroys `body` (and its connection). */
  signal: AbortSignal;
  /** Stops forwarding the caller's abort, once the body has been consumed or given up. */
  release(): void;
}

/**
 * POSTs `payload` as JSON to `{baseUrl}{path}` and resolves with a 2xx response whose body is
 * still unread. Everything else is thrown as UpstreamError: non-2xx → "status" (with the
 * provider's message and Retry-After), no headers within `timeoutMs` (connect included) →
 * "timeout", the caller's signal → "aborted", transport failures → "connect".
 */
export function postUpstream(
  target: UpstreamTarget,
  path: string,
  headers: Record<string, string>,
  payload: JsonObject,
  signal: AbortSignal,
): Promise<UpstreamResponse> {
  return callUpstream(target, { method: "POST", path, headers, body: { contentType: "application/json", data: JSON.stringify(payload) } }, signal);
}

/** One request of any method; `postUpstream` is the JSON POST every chat call makes. */
export interface UpstreamCall {
  method: "GET" | "POST" | "DELETE";
  /** Appended to the target's baseUrl. */
  path: string;
  headers: Record<string, string>;
  /** A stream (e.g. a generated multipart upload) is sent as it is produced, never joined in memory. */
  body?: { contentType: string; data: string | Readable };
}

/** `postUpstream` for any method and body, with the same outcomes and errors. */
export async function callUpstream(target: UpstreamTarget, call: UpstreamCall, signal: AbortSignal): Promise<UpstreamResponse> {
  if (signal.aborted) throw abortedError();
  // Our own controller so that one signal carries both the caller's abort and the deadline.
  const controller = new AbortController();
  const forwardAbort = () => controller.abort();
  signal.addEventListener("abort", forwardAbort, { once: true });
  const release = () => signal.removeEventListener("abort", forwardAbort);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, target.timeoutMs);
  let response: Dispatcher.ResponseData;
  try {
    response = await request(joinUrl(target.baseUrl, call.path), {
      method: call.method,
      headers: call.body ? { "content-type": call.body.contentType, ...call.headers } : call.headers,
      body: call.body?.data ?? null,
      dispatcher: target.dispatcher ?? sharedAgent,
      signal: controller.signal,
      headersTimeout: target.timeoutMs,
    });
  } catch (err) {
    release();
    if (signal.aborted) throw abortedError();
    if (timedOut || errorCode(err) === "UND_ERR_HEADERS_TIMEOUT") throw timeoutError(target);
    throw transportError(err);
  } finally {
    clearTimeout(timer);
  }
  const { statusCode, headers: responseHeaders, body } = response;
  if (statusCode >= 200 && statusCode < 300) {
    return { status: statusCode, headers: responseHeaders, body, signal, release };
  }
  try {
    const text = await readLimited(body, MAX_ERROR_BODY_BYTES);
    throw statusError(statusCode, parseJsonOrUndefined(text), responseHeaders, target.apiKey);
  } catch (err) {
    if (err instanceof UpstreamError) throw err;
    if (signal.aborted) throw abortedError();
    // The error body broke off; the status alone still says what happened.
    throw statusError(statusCode, undefined, responseHeaders, target.apiKey);
  } finally {
    release();
  }
}

/** The whole 2xx body as a JSON object; anything else is the provider breaking its format. */
export async function readJsonObject(response: UpstreamResponse): Promise<JsonObject> {
  let text: string;
  try {
    text = await response.body.text();
  } catch (err) {
    if (response.signal.aborted) throw abortedError();
    throw new UpstreamError("connect", `the upstream connection broke while reading the answer (${errorCode(err)})`);
  } finally {
    response.release();
  }
  const json = parseJsonOrUndefined(text);
  if (!isObject(json)) throw new UpstreamError("protocol", "the upstream answer is not a JSON object");
  return json;
}

/**
 * The SSE events of a 2xx streamed body. A body that breaks off throws "cut" ("aborted" when the
 * caller's signal did it); whether a clean end came too early is the adapter's call, since only
 * it knows its provider's terminal event. Stopping iteration early closes the connection.
 */
export async function* upstreamEvents(response: UpstreamResponse): AsyncGenerator<SseEvent, void, undefined> {
  try {
    yield* readSse(response.body);
  } catch (err) {
    if (err instanceof UpstreamError) throw err;
    if (response.signal.aborted) throw abortedError();
    throw new UpstreamError("cut", `the upstream stream broke off (${errorCode(err)})`);
  } finally {
    response.release();
    if (!response.body.readableEnded) response.body.destroy();
  }
}

/**
 * The non-blank lines of a 2xx JSONL body (batch result files), read as they arrive so a large
 * file is never held whole. Breaks are reported as in `upstreamEvents`.
 */
export async function* upstreamLines(response: UpstreamResponse): AsyncGenerator<string, void, undefined> {
  try {
    yield* readLines(response.body);
  } catch (err) {
    if (err instanceof UpstreamError) throw err;
    if (response.signal.aborted) throw abortedError();
    throw new UpstreamError("cut", `the upstream file broke off (${errorCode(err)})`);
  } finally {
    response.release();
    if (!response.body.readableEnded) response.body.destroy();
  }
}

/** Reads a 2xx body we do not need (DELETE, cancel answers) so its connection can be reused. */
export async function discardBody(response: UpstreamResponse): Promise<void> {
  try {
    await response.body.dump();
  } finally {
    response.release();
  }
}

/**
 * Streams are requested with `accept: text/event-stream`; a JSON answer instead is either an
 * error the provider sent with a 2xx status, or not the format at all.
 */
export async function expectEventStream(response: UpstreamResponse, apiKey: string): Promise<void> {
  const type = headerValue(response.headers, "content-type") ?? "";
  if (type.includes("text/event-stream")) return;
  let json: unknown;
  try {
    json = parseJsonOrUndefined(await readLimited(response.body, MAX_ERROR_BODY_BYTES));
  } catch {
    json = undefined;
  } finally {
    response.release();
  }
  if (response.signal.aborted) throw abortedError();
  if (isObject(json) && json.error !== undefined) {
    const message = providerErrorMessage(json, apiKey) ?? "the upstream answered with an error";
    throw new UpstreamError("status", message, { status: isObject(json.error) ? statusForErrorObject(json.error) : 502 });
  }
  throw new UpstreamError("protocol", `the upstream answered a stream request with "${type.slice(0, 60)}" instead of an event stream`);
}

/** One SSE `data:` payload as a JSON object. */
export function parseEventData(data: string): JsonObject {
  const json = parseJsonOrUndefined(data);
  if (!isObject(json)) throw new UpstreamError("protocol", "an upstream stream event is not a JSON object");
  return json;
}

export function statusError(status: number, body: unknown, headers: Dispatcher.ResponseData["headers"], apiKey: string): UpstreamError {
  const message = providerErrorMessage(body, apiKey) ?? `the upstream answered HTTP ${status}`;
  const retryAfterS = retryAfterSeconds(headerValue(headers, "retry-after"), headerValue(headers, "retry-after-ms"));
  return new UpstreamError("status", message, retryAfterS === undefined ? { status } : { status, retryAfterS });
}

export function abortedError(): UpstreamError {
  return new UpstreamError("aborted", "the request was cancelled by the caller");
}

function timeoutError(target: UpstreamTarget): UpstreamError {
  return new UpstreamError("timeout", `the upstream did not answer within ${target.timeoutMs} ms`);
}

const PROTOCOL_CODES = new Set(["UND_ERR_HEADERS_OVERFLOW", "HPE_INVALID_CONSTANT", "UND_ERR_RES_CONTENT_LENGTH_MISMATCH", "UND_ERR_INFO"]);

function transportError(err: unknown): UpstreamError {
  const code = errorCode(err);
  if (PROTOCOL_CODES.has(code) || code.startsWith("HPE_")) {
    return new UpstreamError("protocol", `the upstream answer is not valid HTTP (${code})`);
  }
  return new UpstreamError("connect", `the connection to the upstream failed (${code})`);
}

/** The error's code (ECONNREFUSED, UND_ERR_SOCKET, …), safe to show; never its message. */
function errorCode(err: unknown): string {
  const direct = typeof err === "object" && err !== null && "code" in err ? String((err as { code: unknown }).code) : "";
  if (/^[A-Z0-9_]{1,64}$/.test(direct)) return direct;
  // undici wraps socket failures of fetch-style calls; look one level down.
  const cause = typeof err === "object" && err !== null && "cause" in err ? (err as { cause: unknown }).cause : undefined;
  const inner = typeof cause === "object" && cause !== null && "code" in cause ? String((cause as { code: unknown }).code) : "";
  return /^[A-Z0-9_]{1,64}$/.test(inner) ? inner : "UNKNOWN";
}

function headerValue(headers: Dispatcher.ResponseData["headers"], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

async function readLimited(body: Dispatcher.ResponseData["body"], limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = chunk as Buffer;
    chunks.push(buffer);
    size += buffer.length;
    if (size >= limit) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, limit).toString("utf8");
}

function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** `{baseUrl}{path}` without doubled slashes: "https://h/v1/" + "/messages". */
function joinUrl(baseUrl: string, path: string): string {
  return baseUrl.endsWith("/") ? baseUrl.replace(/\/+$/, "") + path : baseUrl + path;
}
