import type { IncomingMessage, ServerResponse } from "node:http";
import type { DescMethod } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createConnectRouter,
  createContextKey,
  createContextValues,
  type ConnectRouter,
  type ContextValues,
  type Interceptor,
} from "@connectrpc/connect";
import { encodeEnvelope, type UniversalHandler, type UniversalServerRequest } from "@connectrpc/connect/protocol";
import {
  compressionBrotli,
  compressionGzip,
  universalRequestFromNodeRequest,
  universalResponseToNodeResponse,
  type connectNodeAdapter,
} from "@connectrpc/connect-node";
import { closeAfterAnswer } from "../../facade/unread-body.js";
import type { Logger } from "../platform/logger.js";
import { errorMessage } from "../../wire/errors.js";

/**
 * The Connect, gRPC-Web and gRPC door of the core (both listeners): connect-node's adapter, with
 * one step before a call is handed to its handler. connect-es reads and inflates a unary call's
 * whole body before any interceptor runs, so the auth interceptor alone would refuse a caller
 * without a key only after the gateway had taken in whatever it sent. Here `admit` looks at the
 * call's headers first. A call it refuses never has its body read: the handler gets an empty
 * request message in the call's own framing instead, and the interceptors run on it as on any
 * call, so the refusal is the core's own (the auth interceptor's error, request id, access line,
 * metrics) in the protocol's own format. The innermost interceptor throws the admission's error
 * should a call it refused get that far, so the empty message never reaches a handler.
 */
export interface RpcDoorOptions {
  routes: (router: ConnectRouter) => void;
  /** The core's chain, outermost first. */
  interceptors: Interceptor[];
  shutdownSignal: AbortSignal;
  /** The read limit of handlers registered without their own (a method's is set where it is registered). */
  readMaxBytes: number;
  admit: Admission;
  log: Pick<Logger, "error">;
}

/** Resolves when the call's body may be read; rejects with the refusal when its headers decide it. */
export type Admission = (method: DescMethod, header: Headers, signal: AbortSignal) => Promise<void>;

type NodeHandler = ReturnType<typeof connectNodeAdapter>;
type NodeRequest = Parameters<NodeHandler>[0];
type NodeResponse = Parameters<NodeHandler>[1];

const refusedKey = createContextKey<ConnectError | undefined>(undefined, {
  description: "refused before its body was read",
});

/** Innermost: a refused call ends here whatever the interceptors before it made of it. */
const refusedCallsEnd: Interceptor = (next) => (req) => {
  const refusal = req.contextValues.get(refusedKey);
  if (refusal !== undefined) throw refusal;
  return next(req);
};

/** The request headers that describe the body a refused call is no longer read for. */
const BODY_HEADERS = ["content-length", "content-encoding", "transfer-encoding"];

export function rpcDoor({
  routes,
  interceptors,
  shutdownSignal,
  readMaxBytes,
  admit,
  log,
}: RpcDoorOptions): NodeHandler {
  const router = createConnectRouter({
    interceptors: [...interceptors, refusedCallsEnd],
    shutdownSignal,
    readMaxBytes,
    acceptCompression: [compressionGzip, compressionBrotli],
  });
  routes(router);
  const handlers = new Map(router.handlers.map((handler) => [handler.requestPath, handler]));

  return (req, res) => {
    const handler = handlers.get((req.url ?? "").split("?", 1)[0]!);
    if (!handler) {
      res.writeHead(404);
      res.end();
      return;
    }
    const values = createContextValues();
    let uReq: UniversalServerRequest;
    try {
      uReq = universalRequestFromNodeRequest(req, res, undefined, values);
    } catch {
      // No authority to make the call's URL of (an HTTP/1.0 request without Host).
      res.writeHead(400);
      res.end();
      return;
    }
    void serve(handler, req, res, uReq, values);
  };

  async function serve(
    handler: UniversalHandler,
    req: NodeRequest,
    res: NodeResponse,
    uReq: UniversalServerRequest,
    values: ContextValues,
  ): Promise<void> {
    const authorization = uReq.header.get("authorization");
    const refusal = await admit(
      handler.method,
      new Headers(authorization === null ? {} : { authorization }),
      uReq.signal,
    ).then(
      () => undefined,
      (err: unknown) => ConnectError.from(err),
    );
    if (refusal !== undefined) {
      values.set(refusedKey, refusal);
      for (const name of BODY_HEADERS) uReq.header.delete(name);
      uReq = { ...uReq, body: once(emptyRequestBody(uReq.header.get("content-type") ?? "")) };
    }
    try {
      const answer = await handler(uReq);
      // Answered before the client has sent its whole request: refused, or a unary call over its
      // limit (a stream's answer may rightly begin while its request still comes). On HTTP/1.1
      // the rest is read away or the connection closed in stages, so that the client reads the
      // answer rather than a reset (facade/unread-body.ts). An HTTP/2 stream is left as it is:
      // the answer ends it for the client, and its flow-control window bounds what it can send
      // meanwhile.
      const early = !req.complete && (refusal !== undefined || handler.method.methodKind === "unary");
      if (early && !("stream" in req)) closeAfterAnswer(req as IncomingMessage, res as ServerResponse);
      await universalResponseToNodeResponse(answer, res);
    } catch (reason) {
      if (ConnectError.from(reason).code === Code.Aborted) return;
      log.error(
        { err: errorMessage(reason), method: `${handler.service.typeName}/${handler.method.name}` },
        "the answer of a call could not be written",
      );
    }
  }
}

/**
 * An empty request message as the content type frames and encodes it: JSON `{}` or no bytes at
 * all for binary, in an uncompressed envelope for every protocol but Connect unary.
 */
function emptyRequestBody(contentType: string): Uint8Array {
  const json = /^application\/(?:(?:connect|grpc|grpc-web)\+)?json(?:;|$)/i.test(contentType);
  const message = json ? new TextEncoder().encode("{}") : new Uint8Array(0);
  return /^application\/(?:grpc|connect\+)/i.test(contentType) ? encodeEnvelope(0, message) : message;
}

async function* once(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  yield bytes;
}
