/**
 * The REST/SSE facade: no endpoint-specific code. Per request: match the route compiled from the
 * `google.api.http` rules, build the request message, call the core through a Connect transport
 * (in-process or remote), and render JSON, SSE, raw bytes (HttpBody) or the API's error envelope.
 * Client-streaming RPCs take a multipart upload (multipart-upload.ts).
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  create,
  type DescMethod,
  type DescMethodStreaming,
  type DescMethodUnary,
  type DescService,
  type JsonValue,
  type Message,
} from "@bufbuild/protobuf";
import type { Transport } from "@connectrpc/connect";
import { Code, ConnectError, createContextValues } from "@connectrpc/connect";
import { gatewayError } from "../wire/errors.js";
import { parseJsonBody } from "../wire/json-body.js";
import { CONTENT_FLAGGED_HEADER, PROVIDER_KEY_HEADER, type ExchangeObserver } from "../wire/exchange.js";
import { CACHE_CONTROL_HEADER, CACHE_TTL_HEADER } from "../wire/cache-headers.js";
import { REQUEST_ID_HEADER, requestIdOf } from "../wire/request-id.js";
import { OVERHEAD_MS_HEADER, UPSTREAM_MS_HEADER } from "../wire/timing-headers.js";
import { UpstreamWatch, upstreamWatchKey } from "../wire/upstream-watch.js";
import { jsonEventFrames, TEXT_FRAMES } from "../wire/sse-frames.js";
import { readBody } from "./body-reader.js";
import { createCredentialCheck } from "./credential-check.js";
import { sendError, toHttpError } from "./error-response.js";
import { HttpBodySchema, type HttpBody } from "../gen/google/api/httpbody_pb.js";
import { httpBodyFrames, isEventStream, writeHttpBodyStream } from "./http-body-stream.js";
import { uploadMultipart } from "./multipart-upload.js";
import { noRouteError } from "./no-route.js";
import { splitPath } from "./path-template.js";
import { uploadRawBody } from "./raw-body-upload.js";
import { decodeRequest } from "./request-decoder.js";
import { encodeResponse, jsonReplyOf } from "./response-encoder.js";
import { RouteTable, type Route } from "./route-table.js";
import { KeepaliveTicker } from "./keepalive-ticker.js";
import { StartPacer } from "./start-pacer.js";
import { writeSse } from "./sse.js";
import { closeAfterAnswer } from "./unread-body.js";

/** The facade's logging needs (a pino logger has them); the facade depends on no logger of its own. */
export interface FacadeLog {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface FacadeOptions {
  services: readonly DescService[];
  transport: Transport;
  log: FacadeLog;
  sseKeepaliveMs: number;
  /**
   * Authenticate before reading a request (credential-check.ts); on unless the core behind has no
   * authentication at all (the facade's own test rigs).
   */
  checkCredentialsFirst?: boolean;
  /** Told of every answered REST request (access log, metrics); see wire/exchange.ts. */
  observe?: ExchangeObserver;
}

export interface Facade {
  routes: RouteTable;
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** Ends open event streams (shutdown). */
  stop(): void;
  /** Event streams being written now (metrics). */
  readonly openStreams: number;
}

/**
 * Request headers the core may act on; everything else stays at the edge (`x-request-id` is decided
 * here, then forwarded).
 */
const FORWARDED_REQUEST_HEADERS = [
  "authorization",
  "x-session-id",
  "idempotency-key",
  CACHE_TTL_HEADER,
  CACHE_CONTROL_HEADER,
];

/**
 * Why the core's call is aborted once the REST exchange is over (answered, or the client gone):
 * one shared reason, since an abort without one builds a DOMException and its stack every time.
 */
const REQUEST_ENDED = new ConnectError("the REST request has ended", Code.Canceled);

/**
 * What the records say of a request its client left before the answer ended (nginx's name and
 * number; the core's Canceled).
 */
const CLIENT_CLOSED_REQUEST = 499;

/**
 * How long one turn of the event loop may spend starting new requests before the rest wait for the
 * next turn (start-pacer.ts): a burst of new calls then delays itself, not the streams already open.
 */
const START_BUDGET_MS = 10;

/** How long, and for how many keys, a success of the credential check is remembered. */
const CREDENTIALS_REMEMBERED_MS = 30_000;
const CREDENTIALS_REMEMBERED = 10_000;

/** Transport-level response headers that must not leak into the REST response. */
const PROTOCOL_HEADER =
  /^(content-type|content-length|content-encoding|accept-encoding|transfer-encoding|connection|keep-alive|te|trailer|date|vary|grpc-.*|connect-.*)$/i;

/** What a REST exchange has learnt so far, for its error answer and its observers. */
interface ExchangeState {
  /** Decided on arrival (wire/request-id.ts). */
  requestId: string;
  /** Set once the request matched one. */
  route: Route | undefined;
  /** The caller's key label, once the credential check has passed. */
  keyLabel: string | undefined;
  /** What the answer's head said the gateway had added (x-gateway-overhead-ms), and the provider's time by then. */
  overheadMs: number | undefined;
  upstreamMs: number;
  /**
   * The answer is relayed past its head (an event stream, streamed bytes): what the provider
   * produces meanwhile is the provider's time, so the gateway's share stays what the head said.
   */
  relaying: boolean;
  /** The core said a `flag` content filter matched (CONTENT_FLAGGED_HEADER). */
  contentFlagged: boolean;
  /** Which key of a provider's pool answered (PROVIDER_KEY_HEADER). */
  providerKey: string | undefined;
  /** The providers' time as the core measures it, live (wire/upstream-watch.ts); unused behind a remote core. */
  watch: UpstreamWatch;
  /** The client went away before the answer ended: recorded as 499, whatever the answer's head said. */
  abandoned: boolean;
  /** The facade itself tore down an answer already begun (a stream of bytes failed midway): not the client leaving. */
  cutShort: boolean;
}

export function createFacade({
  services,
  transport,
  log,
  sseKeepaliveMs,
  checkCredentialsFirst = true,
  observe,
}: FacadeOptions): Facade {
  const routes = RouteTable.fromServices(services);
  const open = new Set<AbortController>();
  const keepalive = new KeepaliveTicker(sseKeepaliveMs);
  const pacer = new StartPacer(START_BUDGET_MS);
  const checkCredentials = checkCredentialsFirst
    ? createCredentialCheck({ transport, ttlMs: CREDENTIALS_REMEMBERED_MS, maxEntries: CREDENTIALS_REMEMBERED })
    : async () => undefined;

  async function serve(
    req: IncomingMessage,
    res: ServerResponse,
    started: number,
    state: ExchangeState,
  ): Promise<void> {
    const [rawPath = "", rawQuery = ""] = (req.url ?? "/").split("?", 2);
    const { segments, malformed } = splitPath(rawPath);
    const match = routes.match(req.method ?? "GET", segments);
    if (match.kind === "none") throw noRouteError(routes, req, rawPath, segments);
    if (match.kind === "wrong-verb") {
      res.setHeader("allow", match.allowed.join(", "));
      throw gatewayError(
        405,
        `Method ${req.method} is not allowed on ${rawPath}; allowed: ${match.allowed.join(", ")}`,
      );
    }
    const { route, values } = match;
    state.route = route;
    const header = forwardedHeaders(req, state.requestId);
    const abort = new AbortController();
    res.once("close", () => abort.abort(REQUEST_ENDED));
    // Before anything the caller sent is read or decoded (credential-check.ts).
    state.keyLabel = await checkCredentials(route.method, header, abort.signal);
    if (malformed) throw gatewayError(400, "Malformed percent-encoding in the request path");
    for (const value of values) {
      if (value === "." || value === "..")
        throw gatewayError(400, `The path segment '${value}' cannot address a resource`);
    }
    if (route.method.methodKind === "client_streaming") {
      const upload = route.method.input.typeName === "google.api.HttpBody" ? uploadRawBody : uploadMultipart;
      const reply = await upload(req, route, {
        transport,
        header,
        query: new URLSearchParams(rawQuery),
        signal: abort.signal,
      });
      // Parts after the file are not read: the connection cannot carry another request.
      closeAfterAnswer(req, res);
      sendMessage(res, route, reply.message, responseHeaders(reply.header, started, state));
      return;
    }
    const message =
      route.method.input.typeName === "google.api.HttpBody"
        ? // The raw body as the service parses it (the JSON-native inference routes).
          create(HttpBodySchema, {
            contentType: req.headers["content-type"] ?? "",
            data: await readBody(req, route.maxBodyBytes),
          })
        : decodeRequest(route, {
            body: route.body === "" ? undefined : parseJsonBody(await readBody(req, route.maxBodyBytes)),
            values,
            query: new URLSearchParams(rawQuery),
          });
    await call(route, message, header, abort, res, started, state);
  }

  async function call(
    route: Route,
    message: Message,
    header: Headers,
    abort: AbortController,
    res: ServerResponse,
    started: number,
    state: ExchangeState,
  ): Promise<void> {
    const { method } = route;
    const values = createContextValues().set(upstreamWatchKey, state.watch);
    if (isUnary(method)) {
      const response = await transport.unary(method, abort.signal, undefined, header, message, values);
      sendMessage(res, route, response.message, responseHeaders(response.header, started, state));
      return;
    }
    // Every method kind but unary is a streaming one; DescMethod is not a discriminated union.
    const response = await transport.stream(
      method as DescMethodStreaming,
      abort.signal,
      undefined,
      header,
      single(message),
      values,
    );
    const iterator = response.message[Symbol.asyncIterator]();
    const first = await iterator.next();
    const headers = responseHeaders(response.header, started, state);
    if (route.reply === "http-body-stream") {
      if (first.done) throw gatewayError(502, "The service ended the call without a response");
      state.relaying = true;
      if (isEventStream(first.value as HttpBody))
        await relaySse(
          abort,
          res,
          headers,
          httpBodyFrames(first.value as HttpBody, iterator as AsyncIterator<HttpBody>),
          route,
        );
      else
        await writeHttpBodyStream(
          res,
          route.successCode,
          headers,
          first.value as HttpBody,
          iterator as AsyncIterator<HttpBody>,
        );
      return;
    }
    if (route.reply !== "stream" || (!first.done && jsonReplyOf(method.output, first.value))) {
      if (first.done) throw gatewayError(502, "The service ended the call without a response");
      sendMessage(res, route, first.value, headers);
      abort.abort(REQUEST_ENDED);
      return;
    }
    state.relaying = true;
    await relaySse(
      abort,
      res,
      headers,
      jsonEventFrames(encodeStream(first, iterator, method.output), route.sseNamedEvents, TEXT_FRAMES),
      route,
    );
  }

  /** An event stream, ended early by close() at shutdown. */
  async function relaySse(
    abort: AbortController,
    res: ServerResponse,
    headers: Record<string, string>,
    frames: AsyncIterable<string | Uint8Array>,
    route: Route,
  ): Promise<void> {
    open.add(abort);
    try {
      await writeSse(res, headers, frames, {
        keepalive,
        namedEvents: route.sseNamedEvents,
        errorDialect: route.errorDialect,
      });
    } finally {
      open.delete(abort);
    }
  }

  return {
    routes,
    handle(req, res) {
      const started = performance.now();
      const state: ExchangeState = {
        requestId: requestIdOf(req.headers[REQUEST_ID_HEADER]),
        route: undefined,
        keyLabel: undefined,
        overheadMs: undefined,
        upstreamMs: 0,
        relaying: false,
        contentFlagged: false,
        providerKey: undefined,
        watch: new UpstreamWatch(),
        abandoned: false,
        cutShort: false,
      };
      // Before the answer was all handed over: the client left. Heard here, before the abort it
      // causes ends the call, so an event stream that then ends quietly (sse.ts) is known as left.
      res.once("close", () => {
        if (!res.writableFinished && !state.cutShort) state.abandoned = true;
      });
      pacer.start(() => answer(req, res, started, state));
    },
    stop() {
      for (const abort of open) abort.abort();
    },
    get openStreams() {
      return open.size;
    },
  };

  /** Serves the request, answers what failed with the API's error envelope, and tells the observers. */
  function answer(req: IncomingMessage, res: ServerResponse, started: number, state: ExchangeState): void {
    // A client that left while its start waited its turn: recorded as left, nothing read.
    const served = res.destroyed
      ? Promise.reject(new Error("the client left before its request started"))
      : serve(req, res, started, state);
    served
      .catch((err: unknown) => {
        if (state.abandoned || (res.destroyed && !res.writableFinished)) {
          // The client went away before its answer: normal traffic, nothing to answer.
          state.abandoned = true;
          log.info(
            { method: req.method, path: req.url?.split("?")[0], requestId: state.requestId },
            "client closed the connection before the answer",
          );
          return;
        }
        const error = toHttpError(err);
        if (error.status >= 500 && !(err instanceof ConnectError))
          log.error({ err: String(err), requestId: state.requestId }, "facade error");
        closeAfterAnswer(req, res);
        // An answer already begun can only be cut off (error-response.ts).
        state.cutShort = res.headersSent;
        sendError(
          res,
          error,
          responseHeaders(err instanceof ConnectError ? err.metadata : undefined, started, state),
          state.route?.errorDialect,
        );
      })
      .finally(() => {
        if (!observe) return;
        const durationMs = performance.now() - started;
        const { overheadMs, relaying, watch, abandoned } = state;
        // The core's own measure when it is in-process; behind a remote core, what the headers said.
        const { upstreamMs, upstreamCancelled } = watch.used
          ? watch.reading(abandoned)
          : {
              upstreamMs:
                relaying && overheadMs !== undefined ? Math.max(0, durationMs - overheadMs) : state.upstreamMs,
              upstreamCancelled: false,
            };
        observe({
          protocol: "rest",
          method: req.method ?? "GET",
          route: state.route?.template,
          status: abandoned ? CLIENT_CLOSED_REQUEST : res.statusCode,
          durationMs,
          upstreamMs,
          upstreamCancelled,
          requestId: state.requestId,
          keyLabel: state.keyLabel,
          contentFlagged: state.contentFlagged,
          providerKey: state.providerKey,
        });
      });
  }
}

function sendMessage(res: ServerResponse, route: Route, message: Message, headers: Record<string, string>): void {
  const output = route.method.output;
  if (route.reply === "http-body") {
    const body = message as Message & { contentType: string; data: Uint8Array };
    res.writeHead(route.successCode, {
      ...headers,
      "content-type": body.contentType || "application/octet-stream",
      "content-length": body.data.length,
    });
    res.end(body.data);
    return;
  }
  if (route.reply === "empty") {
    res.writeHead(204, headers);
    res.end();
    return;
  }
  const json = JSON.stringify(encodeResponse(output, message));
  res.writeHead(route.successCode, {
    ...headers,
    "content-type": "application/json",
    "content-length": Buffer.byteLength(json),
  });
  res.end(json);
}

async function* encodeStream(
  first: IteratorResult<Message>,
  rest: AsyncIterator<Message>,
  schema: Parameters<typeof encodeResponse>[0],
): AsyncIterable<JsonValue> {
  for (let next = first; !next.done; next = await rest.next()) yield encodeResponse(schema, next.value);
}

function isUnary(method: DescMethod): method is DescMethodUnary {
  return method.methodKind === "unary";
}

async function* single<T>(value: T): AsyncIterable<T> {
  yield value;
}

function forwardedHeaders(req: IncomingMessage, requestId: string): Headers {
  const headers = new Headers();
  for (const name of FORWARDED_REQUEST_HEADERS) {
    const value = req.headers[name];
    if (typeof value === "string") headers.set(name, value);
  }
  // Decided once, here: the core logs and records the id the client is told.
  headers.set(REQUEST_ID_HEADER, requestId);
  if (req.headers.host) headers.set("x-forwarded-host", req.headers.host);
  return headers;
}

/**
 * The core's response headers a REST client may see, plus the request id and what the gateway
 * added to the request so far: the time since it arrived less the time the core reports waiting on
 * providers. Every answer's head is made here, errors and event streams included.
 */
function responseHeaders(headers: Headers | undefined, started: number, state: ExchangeState): Record<string, string> {
  const out: Record<string, string> = {};
  headers?.forEach((value, name) => {
    if (!PROTOCOL_HEADER.test(name)) out[name] = value;
  });
  const upstreamMs = Number(out[UPSTREAM_MS_HEADER] ?? 0);
  if (out[CONTENT_FLAGGED_HEADER] === "true") state.contentFlagged = true;
  state.providerKey = out[PROVIDER_KEY_HEADER];
  const overheadMs = Math.max(0, performance.now() - started - upstreamMs);
  state.overheadMs = overheadMs;
  state.upstreamMs = upstreamMs;
  out[OVERHEAD_MS_HEADER] = overheadMs.toFixed(3);
  out[REQUEST_ID_HEADER] = state.requestId;
  return out;
}
