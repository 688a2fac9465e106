import {
  create,
  type DescMessage,
  type DescMethod,
  type DescMethodStreaming,
  type DescMethodUnary,
  type DescService,
  type MessageInitShape,
  type MessageShape,
} from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextKey,
  createContextValues,
  createServiceImplSpec,
  type ContextValues,
  type HandlerContext,
  type Interceptor,
  type MethodImplSpec,
  type StreamRequest,
  type StreamResponse,
  type Transport,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { createMethodUrl, getAbortSignalReason, invokeUnaryImplementation } from "@connectrpc/connect/protocol";
import { withMetadata } from "../../../wire/errors.js";
import { upstreamWatchKey } from "../../../wire/upstream-watch.js";

/**
 * The facade's in-process way to the core (docs/architecture.md): a Connect `Transport` that hands the
 * message objects to the service implementation, without serialization or envelopes, through the
 * core's interceptor chain and under a handler context like the one connect's handlers make (the
 * deadline, the caller's signal and the gateway's shutdown all abort `ctx.signal`). The caller sees
 * what a remote client of the core would see: real messages, ConnectErrors only, the response
 * headers of a failed call in the error's metadata. The remote (gRPC) path is the parity oracle
 * (test/platform/rpc/transport-parity.test.ts).
 */
export interface DirectTransportOptions {
  /**
   * The core's chain, outermost first, as the listeners run it. Composed once per streaming method,
   * so an interceptor keeps a call's state inside the function it returns, never in its factory.
   */
  interceptors: Interceptor[];
  /** The gateway's last word at shutdown: it aborts every call in flight. */
  shutdownSignal: AbortSignal;
}

/** A handler context and the way to end its call. */
type ContextController = HandlerContext & { abort(reason?: unknown): void };
type StreamingSpec = Exclude<MethodImplSpec, { kind: "unary" }>;
type AnyFn = Parameters<Interceptor>[0];
/** The Transport's `header` (this project compiles without the DOM lib, which names it HeadersInit). */
type HeadersInit = ConstructorParameters<typeof Headers>[0];

interface ServedMethod {
  spec: MethodImplSpec;
  /** `ctx.url`, fixed per method as on a listener. */
  url: string;
  /** A streaming method's interceptor chain around its implementation, composed once. */
  chain: AnyFn | undefined;
}

/**
 * Set on every call this transport makes: the facade observes those as REST exchanges (access log,
 * metrics, traces), so the core's observing interceptor leaves them to it instead of counting them twice.
 */
export const inProcessCall = createContextKey(false, { description: "a call of the direct transport" });

/** The call's own context, for the innermost step of a chain composed once per method. */
const directContext = createContextKey<ContextController | undefined>(undefined, {
  description: "the direct transport's context of a call",
});

/** Handlers read it as `ctx.protocolName`; none branches on it. */
const PROTOCOL_NAME = "direct";
const BASE_URL = "https://in-process";
/**
 * The reason `ctx.signal` carries once a call is over. One shared object: an abort without a
 * reason makes a DOMException with a captured stack, on every call.
 */
const CALL_ENDED = new ConnectError("the call has ended", Code.Canceled);

export function createDirectTransport(
  services: Iterable<readonly [DescService, object]>,
  { interceptors, shutdownSignal }: DirectTransportOptions,
): Transport {
  // Built once: per call a method is one lookup by its descriptor. Unimplemented methods get
  // connect's own stub, which answers Unimplemented as a listener does.
  const served = new Map<DescMethod, ServedMethod>();
  for (const [service, impl] of services) {
    for (const spec of Object.values(createServiceImplSpec(service, impl).methods)) {
      served.set(spec.method, {
        spec,
        url: createMethodUrl(BASE_URL, spec.method),
        chain: spec.kind === "unary" ? undefined : composed(spec),
      });
    }
  }

  function lookup(method: DescMethod): ServedMethod {
    const found = served.get(method);
    // A listener answers an unknown path 404, which its clients read as Unimplemented.
    if (!found) throw new ConnectError(`${method.parent.typeName}.${method.name} is not served`, Code.Unimplemented);
    return found;
  }

  /**
   * What connect's createHandlerContext builds, leaner per call: one abort controller that the
   * caller's signal, the shutdown and the deadline abort (instead of three linked controllers),
   * and the caller's Headers taken as they are (the facade makes one per call; nothing in the
   * core writes request headers).
   */
  function contextFor(
    method: DescMethod,
    url: string,
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
    header: HeadersInit,
    callerValues: ContextValues | undefined,
  ): ContextController {
    const controller = new AbortController();
    const linked = signal ? [signal, shutdownSignal] : [shutdownSignal];
    // As connect's transports: zero or less means no deadline.
    const deadline = timeoutMs !== undefined && timeoutMs > 0 ? Date.now() + timeoutMs : undefined;
    const timer =
      deadline === undefined
        ? undefined
        : setTimeout(() => abort(new ConnectError("the operation timed out", Code.DeadlineExceeded)), timeoutMs);
    const listener = { handleEvent: (event: Event) => abort((event.target as AbortSignal).reason) };
    function abort(reason?: unknown): void {
      clearTimeout(timer);
      for (const linkedSignal of linked) linkedSignal.removeEventListener("abort", listener);
      if (!controller.signal.aborted) controller.abort(reason);
    }
    for (const linkedSignal of linked) {
      if (linkedSignal.aborted) {
        abort(linkedSignal.reason);
        break;
      }
      linkedSignal.addEventListener("abort", listener);
    }
    const context: ContextController = {
      service: method.parent,
      method,
      protocolName: PROTOCOL_NAME,
      requestMethod: "POST",
      url,
      signal: controller.signal,
      timeoutMs: () => (deadline === undefined ? undefined : deadline - Date.now()),
      requestHeader: header instanceof Headers ? header : new Headers(header),
      responseHeader: new Headers(),
      responseTrailer: new Headers(),
      // Fresh per call, as over the network: the auth interceptor stores the caller in them. The
      // caller's upstream watch is the one value carried in: the facade observes these calls, and
      // reads the providers' time there as the core's own observer would (wire/upstream-watch.ts).
      values: createContextValues().set(inProcessCall, true).set(upstreamWatchKey, callerValues?.get(upstreamWatchKey)),
      abort,
    };
    context.values.set(directContext, context);
    return context;
  }

  return {
    async unary<I extends DescMessage, O extends DescMessage>(
      method: DescMethodUnary<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: HeadersInit,
      input: MessageInitShape<I>,
      contextValues?: ContextValues,
    ): Promise<UnaryResponse<I, O>> {
      if (signal?.aborted) throw abandoned(signal);
      const { spec, url } = lookup(method);
      if (spec.kind !== "unary") throw kindMismatch(method);
      const context = contextFor(method, url, signal, timeoutMs, header, contextValues);
      try {
        const message = await invokeUnaryImplementation(spec, context, create(method.input, input), interceptors);
        // The caller gave up (or the deadline passed) while the handler ran on: a remote client
        // would have stopped waiting with that reason.
        if (context.signal.aborted) throw context.signal.reason;
        return {
          stream: false,
          service: method.parent,
          method,
          header: context.responseHeader,
          trailer: context.responseTrailer,
          message: message as MessageShape<O>,
        };
      } catch (err) {
        const error = callerError(context, err);
        context.abort(err);
        throw error;
      } finally {
        // As connect's handlers: whatever the handler left listening on ctx.signal ends with the call.
        context.abort(CALL_ENDED);
      }
    },

    async stream<I extends DescMessage, O extends DescMessage>(
      method: DescMethodStreaming<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: HeadersInit,
      input: AsyncIterable<MessageInitShape<I>>,
      contextValues?: ContextValues,
    ): Promise<StreamResponse<I, O>> {
      if (signal?.aborted) throw abandoned(signal);
      const { spec, url, chain } = lookup(method);
      if (spec.kind === "unary" || !chain) throw kindMismatch(method);
      const context = contextFor(method, url, signal, timeoutMs, header, contextValues);
      const requests = new Normalized(method.input, input[Symbol.asyncIterator]());
      const stream = new DirectStream<MessageShape<O>>(context, requests);
      try {
        const res = await chain({
          stream: true,
          service: method.parent,
          method: spec.method,
          requestMethod: "POST",
          url,
          signal: context.signal,
          header: context.requestHeader,
          contextValues: context.values,
          message: requests,
        });
        if (context.signal.aborted) throw context.signal.reason;
        if (!res.stream)
          throw new ConnectError("an interceptor answered a streaming call with a unary response", Code.Internal);
        copyHeaders(res.header, context.responseHeader);
        stream.start(res.message[Symbol.asyncIterator]() as AsyncIterator<MessageShape<O>>, res.trailer);
        return {
          stream: true,
          service: method.parent,
          method,
          header: context.responseHeader,
          trailer: context.responseTrailer,
          message: stream,
        };
      } catch (err) {
        const error = callerError(context, err);
        context.abort(err);
        throw error;
      }
    },
  };

  /**
   * The chain around a streaming implementation, composed once at start: the innermost step finds
   * the call's context among the values the call carries. (Unary calls go through connect's
   * invokeUnaryImplementation, which composes its chain itself.)
   */
  function composed(spec: StreamingSpec): AnyFn {
    let next: AnyFn = (req) => invokeStreaming(spec, req);
    for (let i = interceptors.length - 1; i >= 0; i--) next = interceptors[i]!(next);
    return next;
  }
}

/**
 * invoke-implementation.js for streaming methods, without its async generators: the handler's
 * messages are normalized and passed on.
 */
async function invokeStreaming(spec: StreamingSpec, req: UnaryRequest | StreamRequest): Promise<StreamResponse> {
  if (!req.stream) throw new ConnectError("an interceptor turned a streaming call into a unary one", Code.Internal);
  const context = req.contextValues.get(directContext);
  if (!context) throw new ConnectError("an interceptor replaced the call's context values", Code.Internal);
  const ctx = handlerContext(context, req);
  const output = spec.method.output;
  let messages: AsyncIterable<MessageShape<DescMessage>>;
  switch (spec.kind) {
    case "server_streaming":
      messages = new Normalized(output, spec.impl(await single(req.message), ctx)[Symbol.asyncIterator]());
      break;
    case "client_streaming":
      messages = once(create(output, await spec.impl(req.message, ctx)));
      break;
    case "bidi_streaming":
      messages = new Normalized(output, spec.impl(req.message, ctx)[Symbol.asyncIterator]());
      break;
  }
  return {
    stream: true,
    service: req.service,
    method: spec.method,
    header: context.responseHeader,
    trailer: context.responseTrailer,
    message: messages,
  };
}

/** invoke-implementation.js' mergeRequest: what the interceptors passed on wins over the context. */
function handlerContext(context: ContextController, req: StreamRequest): HandlerContext {
  return { ...context, service: req.service, requestHeader: req.header, signal: req.signal, values: req.contextValues };
}

/**
 * The caller's side of a streaming call. The call is over when the handler's stream ends or fails
 * or the caller returns: then `ctx.signal` is aborted, as connect's handlers do. On every abort
 * (that one, the caller's signal, the deadline, the shutdown) the handler's stream and the caller's
 * requests, if still open, are returned, so their generators run their `finally` blocks as they do
 * when a listener stops writing and a network client stops sending.
 */
class DirectStream<T> implements AsyncIterableIterator<T> {
  private output: AsyncIterator<T> | undefined;
  private trailer: Headers | undefined;
  /** The handler's stream ended or failed by itself: nothing left to return. */
  private outputEnded = false;
  /** The caller has its last answer (the end, an error, or it returned). */
  private closed = false;

  constructor(
    private readonly context: ContextController,
    private readonly requests: Normalized<DescMessage>,
  ) {
    context.signal.addEventListener("abort", this);
  }

  start(output: AsyncIterator<T>, trailer: Headers): void {
    this.output = output;
    this.trailer = trailer;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<T>> {
    if (this.closed || !this.output) return { done: true, value: undefined };
    let result: IteratorResult<T>;
    try {
      result = await this.output.next();
    } catch (err) {
      this.outputEnded = true;
      const error = callerError(this.context, err);
      this.close(err);
      throw error;
    }
    if (result.done !== true) return result;
    this.outputEnded = true;
    // Ended because the call was aborted (returned by handleEvent, or a handler that took the
    // abort for an end): a remote client would have seen the abort, never a complete stream.
    if (this.context.signal.aborted) {
      this.closed = true;
      throw callerError(this.context, undefined);
    }
    this.close(undefined);
    return result;
  }

  async return(): Promise<IteratorResult<T>> {
    this.close(undefined);
    return { done: true, value: undefined };
  }

  /** `ctx.signal` was aborted (this object is its listener: no closure per call). */
  handleEvent(): void {
    // Clears the deadline timer when the abort came from elsewhere (a no-op for ours).
    this.context.abort(CALL_ENDED);
    if (!this.outputEnded) this.output?.return?.().catch(ignore);
    this.requests.end();
  }

  private close(reason: unknown): void {
    if (this.closed) return;
    this.closed = true;
    if (this.trailer) copyHeaders(this.trailer, this.context.responseTrailer);
    this.context.abort(reason ?? CALL_ENDED);
  }
}

/**
 * A stream of init shapes read as real messages (connect's normalizeIterable), for the caller's
 * requests and the handler's answers alike; `return` and `throw` reach the source.
 */
class Normalized<Desc extends DescMessage> implements AsyncIterableIterator<MessageShape<Desc>> {
  private finished = false;

  constructor(
    private readonly desc: Desc,
    private readonly source: AsyncIterator<MessageInitShape<Desc>>,
  ) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<MessageShape<Desc>>> {
    return this.normalized(await this.source.next());
  }

  async return(value?: unknown): Promise<IteratorResult<MessageShape<Desc>>> {
    this.finished = true;
    return this.source.return ? this.normalized(await this.source.return(value)) : { done: true, value };
  }

  async throw(err?: unknown): Promise<IteratorResult<MessageShape<Desc>>> {
    if (!this.source.throw) throw err;
    return this.normalized(await this.source.throw(err));
  }

  /**
   * The call is over: a source still open (a caller's generator suspended at a yield) is returned,
   * as runStreamingCall does.
   */
  end(): void {
    if (!this.finished) this.return().catch(ignore);
  }

  private normalized(result: IteratorResult<MessageInitShape<Desc>>): IteratorResult<MessageShape<Desc>> {
    if (result.done === true) {
      this.finished = true;
      return result;
    }
    return { done: false, value: create(this.desc, result.value) };
  }
}

/**
 * What a remote client of the core gets for a failed call. After an abort (the caller's signal, the
 * deadline, the shutdown) the reason of the abort, as runUnaryCall reports it, not what the handler
 * made of it. Otherwise a ConnectError ("internal error" for anything else, as connect's handlers
 * answer) whose metadata holds the response headers the handler set before failing, the error's own
 * metadata set over them, and the trailers (protocol-connect/handler-factory.js and its client).
 * Called before the context is aborted.
 */
function callerError(context: ContextController, err: unknown): ConnectError {
  if (context.signal.aborted) return abandoned(context.signal);
  const error =
    err instanceof ConnectError ? err : new ConnectError("internal error", Code.Internal, undefined, undefined, err);
  if (isEmpty(context.responseHeader) && isEmpty(context.responseTrailer)) return error;
  // A new error: the handler's may be a shared constant, and a remote client gets its own copy too.
  const metadata = new Headers(context.responseHeader);
  error.metadata.forEach((value, key) => metadata.set(key, value));
  context.responseTrailer.forEach((value, key) => metadata.append(key, value));
  return withMetadata(error, metadata);
}

/**
 * The error of a call its signal aborted, as runUnaryCall and runStreamingCall report it; a caller
 * aborted before the call never reaches a handler.
 */
function abandoned(signal: AbortSignal): ConnectError {
  return ConnectError.from(getAbortSignalReason(signal), Code.Canceled);
}

/** invoke-implementation.js' ensureSingle: a server-streaming call takes exactly one request. */
async function single<T>(messages: AsyncIterable<T>): Promise<T> {
  const it = messages[Symbol.asyncIterator]();
  const first = await it.next();
  if (first.done === true)
    throw new ConnectError("protocol error: missing input message for server-streaming method", Code.Unimplemented);
  const second = await it.next();
  if (second.done !== true)
    throw new ConnectError(
      "protocol error: received extra input message for server-streaming method",
      Code.Unimplemented,
    );
  return first.value;
}

/** The one answer of a client-streaming call, as a stream. */
function once<T>(value: T): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator]() {
      let taken = false;
      return {
        async next(): Promise<IteratorResult<T>> {
          if (taken) return { done: true, value: undefined };
          taken = true;
          return { done: false, value };
        },
      };
    },
  };
}

/** invoke-implementation.js' copyHeaders: an interceptor may have answered with headers of its own. */
function copyHeaders(from: Headers, to: Headers): void {
  if (from === to) return;
  for (const key of [...to.keys()]) to.delete(key);
  from.forEach((value, key) => to.set(key, value));
}

function isEmpty(headers: Headers): boolean {
  return headers.keys().next().done === true;
}

function kindMismatch(method: DescMethod): ConnectError {
  return new ConnectError(`${method.parent.typeName}.${method.name} is a ${method.methodKind} method`, Code.Internal);
}

function ignore(): void {}
