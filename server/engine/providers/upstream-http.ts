/**
 * The HTTP plumbing every adapter shares: keep-alive pools, the headers deadline, the caller's
 * cancellation, and the translation of transport outcomes into UpstreamError kinds. Messages
 * never carry request headers or keys; a provider's error text is scrubbed (upstream-error-body).
 *
 * Built on node:http rather than undici: on the proxy benchmark undici's request path (its JS
 * dispatcher and WASM parser) cost about twice what node's native parser and agent do per call.
 *
 * @module
 */
import type { JsonObject } from "@bufbuild/protobuf";
import http, { type IncomingHttpHeaders, type IncomingMessage } from "node:http";
import https from "node:https";
import type { Readable } from "node:stream";
import { isObject } from "./json-shape.js";
import { UpstreamError, type UpstreamTarget } from "./provider.js";
import { readLines } from "./line-reader.js";
import { readSse, type SseEvent } from "../../../wire/sse-reader.js";
import { providerErrorMessage, retryAfterSeconds, statusForErrorObject } from "./upstream-error-body.js";

// One pool per scheme for all catalog providers: connections are reused across requests and models.
const POOL = { keepAlive: true, keepAliveMsecs: 10_000, scheduling: "lifo" } as const;
const agents = { "http:": new http.Agent(POOL), "https:": new https.Agent(POOL) };

/** Error bodies are only read for their message; a proxy's HTML page needs no more than this. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/**
 * The largest 2xx answer read whole (JSON answers, and bodies read only to be discarded). The
 * largest real ones are embeddings: 2048 inputs of 3072 dimensions, as OpenAI prints them (one
 * number per indented line), come to about 200 MB. The limit leaves room above that and stays
 * below V8's longest string (about 512 MiB), where decoding the answer would fail anyway; past it
 * the body is an endless one, which would otherwise be held until memory runs out.
 */
export const MAX_JSON_ANSWER_BYTES = 256 * 1024 * 1024;

export interface UpstreamResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** Aborting the caller's signal destroys it (and its connection). */
  body: IncomingMessage;
  signal: AbortSignal;
  /** The target's limit on an answer read whole; MAX_JSON_ANSWER_BYTES when absent. */
  maxAnswerBytes?: number;
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
  return callUpstream(
    target,
    { method: "POST", path, headers, body: { contentType: "application/json", data: JSON.stringify(payload) } },
    signal,
  );
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
export async function callUpstream(
  target: UpstreamTarget,
  call: UpstreamCall,
  signal: AbortSignal,
): Promise<UpstreamResponse> {
  if (signal.aborted) throw abortedError();
  let response: IncomingMessage;
  try {
    response = await send(target, call, signal);
  } catch (err) {
    if (signal.aborted) throw abortedError();
    if (err instanceof UpstreamError) throw err;
    throw transportError(err);
  }
  const status = response.statusCode ?? 0;
  if (status >= 200 && status < 300)
    return {
      status,
      headers: response.headers,
      body: response,
      signal,
      maxAnswerBytes: target.maxAnswerBytes ?? MAX_JSON_ANSWER_BYTES,
    };
  try {
    const text = await readLimited(response, MAX_ERROR_BODY_BYTES);
    throw statusError(status, parseJsonOrUndefined(text), response.headers, target.apiKey);
  } catch (err) {
    if (err instanceof UpstreamError) throw err;
    if (signal.aborted) throw abortedError();
    // The error body broke off; the status alone still says what happened.
    throw statusError(status, undefined, response.headers, target.apiKey);
  }
}

/**
 * The response once its headers are in. The caller's signal goes to node:http as it is (node
 * removes its listener when the exchange ends); the deadline destroys the request with a timeout.
 */
function send(target: UpstreamTarget, call: UpstreamCall, signal: AbortSignal): Promise<IncomingMessage> {
  const url = new URL(joinUrl(target.baseUrl, call.path));
  const scheme = url.protocol === "https:" ? "https:" : "http:";
  const headers: http.OutgoingHttpHeaders = { ...call.headers };
  const data = call.body?.data;
  if (call.body) headers["content-type"] = call.body.contentType;
  // A known length lets node send headers and body in one write, without chunked framing.
  if (typeof data === "string") headers["content-length"] = Buffer.byteLength(data);
  const options: https.RequestOptions = {
    method: call.method,
    hostname: url.hostname.replace(/^\[|\]$/g, ""),
    port: url.port || undefined,
    path: url.pathname + url.search,
    headers,
    signal,
    // A private endpoint gets a fresh connection each time: a pooled socket could lead to an
    // address vetted for another host.
    ...(target.pinned
      ? { agent: false, lookup: target.pinned.lookup, ca: target.pinned.ca }
      : { agent: agents[scheme] }),
  };
  return new Promise((resolve, reject) => {
    const request = (scheme === "https:" ? https : http).request(options);
    const timer = setTimeout(() => request.destroy(timeoutError(target)), target.timeoutMs);
    request.once("response", (response) => {
      clearTimeout(timer);
      resolve(response);
    });
    request.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    if (data === undefined || typeof data === "string") request.end(data);
    else {
      data.once("error", (err) => request.destroy(err));
      data.pipe(request);
    }
  });
}

/**
 * The whole 2xx body as a JSON object; anything else is the provider breaking its format, as is
 * an answer over the target's limit (MAX_JSON_ANSWER_BYTES unless the target sets a lower one).
 */
export async function readJsonObject(response: UpstreamResponse): Promise<JsonObject> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of answerChunks(response)) chunks.push(chunk);
  } catch (err) {
    if (err instanceof UpstreamError) throw err;
    if (response.signal.aborted) throw abortedError();
    throw new UpstreamError("connect", `the upstream connection broke while reading the answer (${errorCode(err)})`);
  }
  const text = chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8");
  const json = parseJsonOrUndefined(text);
  if (!isObject(json)) throw new UpstreamError("protocol", "the upstream answer is not a JSON object");
  return json;
}

/**
 * The SSE events of a 2xx streamed body. A body that breaks off throws "cut" ("aborted" when the
 * caller's signal did it); whether a clean end came too early is the adapter's call, since only
 * it knows its provider's terminal event. Stopping iteration early closes the connection.
 */
export function upstreamEvents(response: UpstreamResponse): AsyncGenerator<SseEvent, void, undefined> {
  return readGuarded(response, readUpstreamSse(response.body), "stream");
}

const upstreamTooLong = (message: string): UpstreamError => new UpstreamError("protocol", message);

/** The events of a provider's event stream: a line or an event past its limit is not the format ("protocol"). */
export function readUpstreamSse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent, void, undefined> {
  return readSse(body, upstreamTooLong);
}

/**
 * The raw chunks of a 2xx streamed body in a binary framing (AWS event streams), as they
 * arrive; breaks are reported as in `upstreamEvents`, the framing is the adapter's.
 */
export function upstreamChunks(response: UpstreamResponse): AsyncGenerator<Buffer, void, undefined> {
  return readGuarded(response, response.body as AsyncIterable<Buffer>, "stream");
}

/**
 * The non-blank lines of a 2xx JSONL body (batch result files), read as they arrive so a large
 * file is never held whole. Breaks are reported as in `upstreamEvents`.
 */
export function upstreamLines(response: UpstreamResponse): AsyncGenerator<string, void, undefined> {
  return readGuarded(response, readLines(response.body), "file");
}

/** A 2xx body read piece by piece: a break is "cut" (or "aborted"), and the body is closed when reading stops. */
async function* readGuarded<T>(
  response: UpstreamResponse,
  pieces: AsyncIterable<T>,
  what: "stream" | "file",
): AsyncGenerator<T, void, undefined> {
  try {
    yield* pieces;
  } catch (err) {
    if (err instanceof UpstreamError) throw err;
    if (response.signal.aborted) throw abortedError();
    throw new UpstreamError("cut", `the upstream ${what} broke off (${errorCode(err)})`);
  } finally {
    if (!response.body.readableEnded) response.body.destroy();
  }
}

/**
 * Reads a 2xx body we do not need (DELETE, cancel answers) so its connection can be reused; one
 * over the target's limit is not what was asked for either, and fails as "protocol".
 */
export async function discardBody(response: UpstreamResponse): Promise<void> {
  for await (const _chunk of answerChunks(response));
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
  }
  if (response.signal.aborted) throw abortedError();
  if (isObject(json) && json.error !== undefined) {
    const message = providerErrorMessage(json, apiKey) ?? "the upstream answered with an error";
    throw new UpstreamError("status", message, {
      status: isObject(json.error) ? statusForErrorObject(json.error) : 502,
    });
  }
  throw new UpstreamError(
    "protocol",
    `the upstream answered a stream request with "${type.slice(0, 60)}" instead of an event stream`,
  );
}

/** One SSE `data:` payload as a JSON object. */
export function parseEventData(data: string): JsonObject {
  const json = parseJsonOrUndefined(data);
  if (!isObject(json)) throw new UpstreamError("protocol", "an upstream stream event is not a JSON object");
  return json;
}

export function statusError(
  status: number,
  body: unknown,
  headers: IncomingHttpHeaders,
  apiKey: string,
): UpstreamError {
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

function transportError(err: unknown): UpstreamError {
  const code = errorCode(err);
  if (code.startsWith("HPE_")) {
    return new UpstreamError("protocol", `the upstream answer is not valid HTTP (${code})`);
  }
  return new UpstreamError("connect", `the connection to the upstream failed (${code})`);
}

/** The error's code (ECONNREFUSED, UND_ERR_SOCKET, …), safe to show; never its message. */
function errorCode(err: unknown): string {
  const direct =
    typeof err === "object" && err !== null && "code" in err ? String((err as { code: unknown }).code) : "";
  if (/^[A-Z0-9_]{1,64}$/.test(direct)) return direct;
  // An abort's error carries the reason as its cause; look one level down.
  const cause =
    typeof err === "object" && err !== null && "cause" in err ? (err as { cause: unknown }).cause : undefined;
  const inner =
    typeof cause === "object" && cause !== null && "code" in cause ? String((cause as { code: unknown }).code) : "";
  return /^[A-Z0-9_]{1,64}$/.test(inner) ? inner : "UNKNOWN";
}

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** A 2xx body's chunks as they arrive, failing as "protocol" past the response's limit. */
async function* answerChunks(response: UpstreamResponse): AsyncGenerator<Buffer, void, undefined> {
  const { body } = response;
  const limit = response.maxAnswerBytes ?? MAX_JSON_ANSWER_BYTES;
  if (Number(headerValue(response.headers, "content-length")) > limit) throw answerTooLarge(body, limit);
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > limit) throw answerTooLarge(body, limit);
    yield chunk as Buffer;
  }
}

/**
 * Destroys the body, so nothing more of it is read and its connection closes. The message states
 * the limit, never the bytes.
 */
function answerTooLarge(body: IncomingMessage, limit: number): UpstreamError {
  body.destroy();
  return new UpstreamError(
    "protocol",
    `the upstream answer is larger than ${Math.round((limit / 1024 / 1024) * 100) / 100} MiB`,
  );
}

async function readLimited(body: IncomingMessage, limit: number): Promise<string> {
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
