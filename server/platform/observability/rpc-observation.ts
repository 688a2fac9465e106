import {
  Code,
  ConnectError,
  type Interceptor,
  type StreamRequest,
  type StreamResponse,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type TextMapGetter,
} from "@opentelemetry/api";
import { httpErrorOf, withMetadata } from "../../../wire/errors.js";
import {
  CONTENT_FLAGGED_HEADER,
  PROVIDER_KEY_HEADER,
  type Exchange,
  type ExchangeObserver,
} from "../../../wire/exchange.js";
import { REQUEST_ID_HEADER, requestIdOf } from "../../../wire/request-id.js";
import { UPSTREAM_MS_HEADER } from "../../../wire/timing-headers.js";
import { UpstreamWatch, upstreamWatchKey } from "../../../wire/upstream-watch.js";
import { callerIn } from "../rpc/auth.js";
import { inProcessCall } from "../rpc/direct-transport.js";
import {
  ATTR_ERROR_TYPE,
  ATTR_GATEWAY_REQUEST_ID,
  ATTR_GATEWAY_UPSTREAM_CANCELLED,
  ATTR_RPC_CONNECT_RPC_ERROR_CODE,
  ATTR_RPC_GRPC_STATUS_CODE,
  ATTR_RPC_METHOD,
  ATTR_RPC_SERVICE,
  ATTR_RPC_SYSTEM,
} from "./span-attributes.js";
import { activeTracer } from "./tracing.js";

/**
 * The outermost interceptor of the core: what the REST facade does for its requests, done for
 * calls that arrive over the network (gRPC, Connect, gRPC-Web). It decides the call's request id
 * (the caller's `x-request-id` when acceptable, else a fresh one) and writes it back into the
 * request headers, where everything downstream reads it (log lines, the ledger row), and into the
 * response headers (gRPC metadata; an error's trailers); it times the call, makes its SERVER span
 * (tracing on) and reports the finished exchange to the observers (access log, metrics).
 *
 * Calls of the direct transport are the facade's REST requests, which the facade decided the id of
 * and observes itself: they pass through untouched, so a REST request is never logged twice.
 */
export function observationInterceptor(observe: ExchangeObserver): Interceptor {
  return (next) => (req) => {
    if (req.contextValues.get(inProcessCall)) return next(req);
    return new ObservedCall(observe, req).run(next);
  };
}

type AnyRequest = UnaryRequest | StreamRequest;
type AnyResponse = UnaryResponse | StreamResponse;
type Next = (req: AnyRequest) => Promise<AnyResponse>;

/** What a stream its client stopped reading (or went away from) is reported as: 499, as REST reports it. */
const CANCELLED = new ConnectError("the client cancelled the call", Code.Canceled);

const HEADERS: TextMapGetter<Headers> = {
  keys: (headers) => [...headers.keys()],
  get: (headers, key) => headers.get(key) ?? undefined,
};

/** One observed call: an object rather than closures, made only for calls over the network. */
class ObservedCall {
  private readonly started = performance.now();
  private readonly requestId: string;
  private readonly protocol: Exchange["protocol"];
  private readonly span: Span | undefined;
  /** The span as the current one: where the handler runs and the access line is logged. */
  private readonly spanContext: Context | undefined;
  private responseHeader: Headers | undefined;
  /** The providers' time, as the handler's inference call reports it (wire/upstream-watch.ts). */
  private readonly watch = new UpstreamWatch();
  private finished = false;

  constructor(
    private readonly observe: ExchangeObserver,
    private readonly req: AnyRequest,
  ) {
    const given = req.header.get(REQUEST_ID_HEADER);
    this.requestId = requestIdOf(given);
    if (this.requestId !== given) req.header.set(REQUEST_ID_HEADER, this.requestId);
    this.protocol = protocolOf(req.header.get("content-type"));
    req.contextValues.set(upstreamWatchKey, this.watch);
    const tracer = activeTracer();
    if (tracer !== undefined) {
      const parent = propagation.extract(ROOT_CONTEXT, req.header, HEADERS);
      this.span = tracer.startSpan(
        `${req.service.typeName}/${req.method.name}`,
        {
          kind: SpanKind.SERVER,
          attributes: {
            [ATTR_RPC_SYSTEM]: this.protocol === "connect" ? "connect_rpc" : "grpc",
            [ATTR_RPC_SERVICE]: req.service.typeName,
            [ATTR_RPC_METHOD]: req.method.name,
            [ATTR_GATEWAY_REQUEST_ID]: this.requestId,
          },
        },
        parent,
      );
      this.spanContext = trace.setSpan(parent, this.span);
    }
  }

  run(next: Next): Promise<AnyResponse> {
    return this.spanContext === undefined ? this.call(next) : context.with(this.spanContext, this.call, this, next);
  }

  /** The next message of the handler's stream, produced within the call's span. */
  pull<T>(iterator: AsyncIterator<T>): Promise<IteratorResult<T>> {
    return this.spanContext === undefined ? iterator.next() : context.with(this.spanContext, iterator.next, iterator);
  }

  /** Once per call: when the answer (or the stream's end, or its failure) is known. */
  finish(error: ConnectError | undefined): void {
    if (this.finished) return;
    this.finished = true;
    const status = error === undefined ? 200 : httpErrorOf(error).status;
    const { upstreamMs, upstreamCancelled } = this.watch.used
      ? this.watch.reading(error?.code === Code.Canceled)
      : { upstreamMs: this.headerUpstreamMs(), upstreamCancelled: false };
    const exchange: Exchange = {
      protocol: this.protocol,
      method: this.req.method.methodKind,
      route: `/${this.req.service.typeName}/${this.req.method.name}`,
      status,
      durationMs: performance.now() - this.started,
      upstreamMs,
      upstreamCancelled,
      requestId: this.requestId,
      keyLabel: callerIn(this.req.contextValues)?.key.label,
      contentFlagged: this.responseHeader?.get(CONTENT_FLAGGED_HEADER) === "true",
      providerKey: this.responseHeader?.get(PROVIDER_KEY_HEADER) ?? undefined,
    };
    if (this.span === undefined || this.spanContext === undefined) {
      this.observe(exchange);
      return;
    }
    endRpcSpan(this.span, this.protocol, status, error, upstreamCancelled);
    // Within the span: log lines of the observers carry its trace id.
    context.with(this.spanContext, this.observe, undefined, exchange);
  }

  /** What the handler said its providers took, for calls that made no inference call (none: 0). */
  private headerUpstreamMs(): number {
    const upstreamMs = Number(this.responseHeader?.get(UPSTREAM_MS_HEADER) ?? 0);
    return Number.isFinite(upstreamMs) ? upstreamMs : 0;
  }

  private async call(next: Next): Promise<AnyResponse> {
    let res: AnyResponse;
    try {
      res = await next(this.req);
    } catch (err) {
      const error = ConnectError.from(err);
      this.finish(error);
      throw withRequestId(error, this.requestId);
    }
    res.header.set(REQUEST_ID_HEADER, this.requestId);
    this.responseHeader = res.header;
    if (!res.stream) {
      this.finish(undefined);
      return res;
    }
    // A client gone mid-stream may leave the stream unread: the call's end is its signal.
    this.req.signal.addEventListener("abort", this, { once: true });
    return { ...res, message: new ObservedStream(res.message, this) };
  }

  /** The call's signal fired (this object is its listener): a stream not finished by now was cancelled. */
  handleEvent(): void {
    this.finish(CANCELLED);
  }
}

/** The handler's messages as connect writes them; the call is finished by their end or failure. */
class ObservedStream<T> implements AsyncIterableIterator<T> {
  private iterator: AsyncIterator<T> | undefined;

  constructor(
    private readonly source: AsyncIterable<T>,
    private readonly call: ObservedCall,
  ) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<T>> {
    this.iterator ??= this.source[Symbol.asyncIterator]();
    let result: IteratorResult<T>;
    try {
      result = await this.call.pull(this.iterator);
    } catch (err) {
      this.call.finish(ConnectError.from(err));
      throw err;
    }
    if (result.done === true) this.call.finish(undefined);
    return result;
  }

  async return(value?: unknown): Promise<IteratorResult<T>> {
    this.call.finish(CANCELLED);
    return this.iterator?.return ? this.iterator.return(value) : { done: true, value: undefined };
  }
}

function endRpcSpan(
  span: Span,
  protocol: Exchange["protocol"],
  status: number,
  error: ConnectError | undefined,
  upstreamCancelled: boolean,
): void {
  if (upstreamCancelled) span.setAttribute(ATTR_GATEWAY_UPSTREAM_CANCELLED, true);
  if (protocol === "connect") {
    if (error !== undefined) span.setAttribute(ATTR_RPC_CONNECT_RPC_ERROR_CODE, codeToString(error.code));
  } else {
    span.setAttribute(ATTR_RPC_GRPC_STATUS_CODE, error?.code ?? 0);
  }
  // As for HTTP: the server failed (5xx), not the caller.
  if (status >= 500) {
    span.setAttribute(ATTR_ERROR_TYPE, error === undefined ? String(status) : codeToString(error.code));
    span.setStatus({ code: SpanStatusCode.ERROR, message: error?.rawMessage });
  }
  span.end();
}

/** gRPC and gRPC-Web say so in their content type; Connect is the rest (its GETs have none). */
function protocolOf(contentType: string | null): Exchange["protocol"] {
  if (contentType?.startsWith("application/grpc-web")) return "grpc-web";
  if (contentType?.startsWith("application/grpc")) return "grpc";
  return "connect";
}

/**
 * The error with the request id in its metadata (a gRPC error's trailers, a Connect error's
 * headers). A copy: the error may be a shared object (an abort reason), never to be changed.
 */
function withRequestId(error: ConnectError, requestId: string): ConnectError {
  const metadata = new Headers(error.metadata);
  metadata.set(REQUEST_ID_HEADER, requestId);
  return withMetadata(error, metadata);
}
