import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { isMessage } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createClient,
  createContextKey,
  type Client,
  type HandlerContext,
  type Interceptor,
  type ServiceImpl,
} from "@connectrpc/connect";
import { connectNodeAdapter, createGrpcTransport } from "@connectrpc/connect-node";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import {
  FileSchema,
  FilesService,
  UploadFileRequestSchema,
  type GetFileContentRequest,
  type GetFileRequest,
  type UploadFileRequest,
} from "../../../gen/gateway/v1/files_pb.js";
import { HttpBodySchema } from "../../../gen/google/api/httpbody_pb.js";
import { createDirectTransport } from "../../../server/platform/rpc/direct-transport.js";
import { eventually } from "../../support/eventually.js";

/**
 * The direct transport's semantics, each against a network call to the same implementation and
 * interceptors over gRPC (the oracle): init shapes in and out become real messages, the chain runs,
 * errors are normalized with the handler's response headers and the error's metadata, deadlines
 * and the caller's signal abort `ctx.signal` and answer DeadlineExceeded / Canceled, an aborted
 * stream runs the handler's `finally`, the shutdown signal reaches handlers, and an unimplemented
 * method answers Unimplemented. The implementation is the test's; the file id picks the behaviour.
 */
const marker = createContextKey<string>("", { description: "set by the test interceptor" });

const probe = {
  started: [] as string[],
  signalReasons: [] as unknown[],
  finalized: 0,
  uploads: [] as boolean[],
};

function abortedOf(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    const fail = () => {
      probe.signalReasons.push(signal.reason);
      reject(signal.reason);
    };
    if (signal.aborted) fail();
    else signal.addEventListener("abort", fail, { once: true });
  });
}

const impl: Partial<ServiceImpl<typeof FilesService>> = {
  async getFile(req: GetFileRequest, ctx: HandlerContext) {
    probe.started.push(req.fileId);
    switch (req.fileId) {
      case "init":
        return { id: "f1", filename: "a.txt", sizeBytes: 3n };
      case "context":
        return { id: ctx.requestHeader.get("x-in") ?? "", filename: ctx.values.get(marker) };
      case "header-then-fail":
        ctx.responseHeader.set("x-handler", "set");
        throw new ConnectError("nope", Code.NotFound, { "retry-after": "3" });
      case "plain-error":
        throw new Error("a secret detail");
      case "wait":
        return abortedOf(ctx.signal);
      default:
        throw new ConnectError("unexpected", Code.InvalidArgument);
    }
  },
  async *getFileContent(req: GetFileContentRequest, ctx: HandlerContext) {
    probe.started.push(req.fileId);
    const one = { contentType: "text/plain", data: new TextEncoder().encode("one") };
    switch (req.fileId) {
      case "init":
        yield one;
        yield { contentType: "text/plain", data: new TextEncoder().encode("two") };
        return;
      case "fail-midway":
        yield one;
        throw new Error("boom");
      case "hang":
        // A listener pulls the next message at once and meets the abort in the await; the direct
        // transport is pulled by its caller and returns the generator at the yield. Either way the
        // finally runs.
        try {
          yield one;
          await abortedOf(ctx.signal);
        } finally {
          probe.finalized += 1;
        }
        return;
      default:
        throw new ConnectError("unexpected", Code.InvalidArgument);
    }
  },
  async uploadFile(requests: AsyncIterable<UploadFileRequest>) {
    let size = 0;
    let filename = "";
    for await (const request of requests) {
      probe.uploads.push(isMessage(request, UploadFileRequestSchema));
      if (request.part.case === "metadata") filename = request.part.value.filename;
      if (request.part.case === "chunk") size += request.part.value.length;
    }
    return { id: "up", filename, sizeBytes: BigInt(size) };
  },
};

const interceptors: Interceptor[] = [
  (next) => async (req) => {
    req.contextValues.set(marker, "seen");
    const res = await next(req);
    res.header.set("x-interceptor", "ran");
    return res;
  },
];

interface Context {
  server: http2.Http2Server;
  sessions: Set<http2.ServerHttp2Session>;
  clients: Array<[string, Client<typeof FilesService>]>;
}

const test = suite<Context>("direct transport");
test.before(async (ctx) => {
  const routes = connectNodeAdapter({ routes: (router) => router.service(FilesService, impl), interceptors });
  ctx.server = http2.createServer(routes);
  ctx.sessions = new Set();
  ctx.server.on("session", (session) => {
    ctx.sessions.add(session);
    session.once("close", () => ctx.sessions.delete(session));
  });
  await new Promise<void>((resolve) => ctx.server.listen(0, "127.0.0.1", resolve));
  const { port } = ctx.server.address() as AddressInfo;
  ctx.clients = [
    [
      "direct",
      createClient(
        FilesService,
        createDirectTransport([[FilesService, impl]], { interceptors, shutdownSignal: new AbortController().signal }),
      ),
    ],
    ["grpc", createClient(FilesService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` }))],
  ];
});
test.after(async (ctx) => {
  // The client's idle session would hold the server open.
  for (const session of ctx.sessions) session.destroy();
  await new Promise<void>((resolve) => ctx.server.close(() => resolve()));
});

/** Protocol headers a network client sees and the direct one has no reason to invent. */
const PROTOCOL = /^(content-type|content-length|date|grpc-.*|connect-.*|accept-encoding|te)$/;

function userHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, key) => {
    if (!PROTOCOL.test(key)) out[key] = value;
  });
  return out;
}

async function drain(stream: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of stream);
}

async function failure(
  promise: Promise<unknown>,
): Promise<{ code: Code; message: string; metadata: Record<string, string> }> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof ConnectError, `a ConnectError, not ${String(err)}`);
    return { code: err.code, message: err.rawMessage, metadata: userHeaders(err.metadata) };
  }
  throw new Error("the call did not fail");
}

test(
  "unary: init shapes become real messages; the chain runs; " + "the handler sees headers and fresh context values",
  async ({ clients }) => {
    for (const [name, client] of clients) {
      const file = await client.getFile(
        { fileId: "init" },
        {
          onHeader: (headers) => assert.equal(userHeaders(headers), { "x-interceptor": "ran" }, name),
        },
      );
      assert.ok(isMessage(file, FileSchema), name);
      assert.equal([file.id, file.filename, file.sizeBytes, file.downloadable], ["f1", "a.txt", 3n, false], name);
      const seen = await client.getFile({ fileId: "context" }, { headers: { "x-in": "from-caller" } });
      assert.equal([seen.id, seen.filename], ["from-caller", "seen"], name);
    }
  },
);

test(
  "errors: the handler's response headers and the error's metadata reach the caller; " +
    "anything else is 'internal error'",
  async ({ clients }) => {
    const results = [];
    for (const [, client] of clients) {
      results.push([
        await failure(client.getFile({ fileId: "header-then-fail" })),
        await failure(client.getFile({ fileId: "plain-error" })),
      ]);
    }
    assert.equal(results[0], results[1]);
    assert.equal(results[0]![0], {
      code: Code.NotFound,
      message: "nope",
      metadata: { "retry-after": "3", "x-handler": "set" },
    });
    assert.equal(results[0]![1], { code: Code.Internal, message: "internal error", metadata: {} });
  },
);

test("a deadline aborts ctx.signal and the caller gets DeadlineExceeded", async ({ clients }) => {
  for (const [name, client] of clients) {
    probe.signalReasons.length = 0;
    const error = await failure(client.getFile({ fileId: "wait" }, { timeoutMs: 50 }));
    assert.is(error.code, Code.DeadlineExceeded, name);
    await eventually(() => probe.signalReasons.length, `${name}: the handler's signal is aborted`);
    assert.is(probe.signalReasons.length, 1, `${name}: the handler's signal was aborted`);
  }
});

test("the caller's signal aborts ctx.signal and the caller gets Canceled", async ({ clients }) => {
  for (const [name, client] of clients) {
    probe.started.length = 0;
    probe.signalReasons.length = 0;
    const controller = new AbortController();
    const pending = failure(client.getFile({ fileId: "wait" }, { signal: controller.signal }));
    await eventually(() => probe.started.length, `${name}: the handler started`);
    controller.abort();
    assert.is((await pending).code, Code.Canceled, name);
    await eventually(() => probe.signalReasons.length, `${name}: the handler's signal is aborted`);
    assert.is(probe.signalReasons.length, 1, `${name}: the handler's signal was aborted`);

    probe.started.length = 0;
    const before = new AbortController();
    before.abort();
    assert.is((await failure(client.getFile({ fileId: "wait" }, { signal: before.signal }))).code, Code.Canceled, name);
    assert.is(
      (await failure(drain(client.getFileContent({ fileId: "init" }, { signal: before.signal })))).code,
      Code.Canceled,
      name,
    );
    assert.equal(probe.started, [], `${name}: a call aborted before it started never reaches the handler`);
  }
});

test("server streaming: real messages; a failure midway after the first message is 'internal error'", async ({
  clients,
}) => {
  const failures = [];
  for (const [name, client] of clients) {
    const texts: string[] = [];
    for await (const body of client.getFileContent({ fileId: "init" })) {
      assert.ok(isMessage(body, HttpBodySchema), name);
      texts.push(new TextDecoder().decode(body.data));
    }
    assert.equal(texts, ["one", "two"], name);

    const seen: string[] = [];
    const error = await failure(
      (async () => {
        for await (const body of client.getFileContent({ fileId: "fail-midway" }))
          seen.push(new TextDecoder().decode(body.data));
      })(),
    );
    assert.equal(seen, ["one"], name);
    failures.push(error);
  }
  assert.equal(failures[0], failures[1]);
  // The headers had gone out with the first message; a remote client finds them in the error too.
  assert.equal(failures[0], { code: Code.Internal, message: "internal error", metadata: { "x-interceptor": "ran" } });
});

test("a caller that leaves a stream aborts the handler, whose finally runs", async ({ clients }) => {
  for (const [name, client] of clients) {
    probe.finalized = 0;
    const controller = new AbortController();
    const error = await failure(
      (async () => {
        for await (const _ of client.getFileContent({ fileId: "hang" }, { signal: controller.signal }))
          controller.abort();
      })(),
    );
    assert.is(error.code, Code.Canceled, name);
    await eventually(() => probe.finalized, `${name}: the handler's finally ran`);
    assert.is(probe.finalized, 1, `${name}: the handler's finally ran`);

    // As the facade leaves a stream whose first message was the whole answer: abort, never read on.
    probe.finalized = 0;
    const leaving = new AbortController();
    const first = await client
      .getFileContent({ fileId: "hang" }, { signal: leaving.signal })
      [Symbol.asyncIterator]()
      .next();
    assert.is(first.done, false, name);
    leaving.abort();
    await eventually(() => probe.finalized, `${name}: the handler's finally ran`);
    assert.is(probe.finalized, 1, `${name}: the handler's finally ran without another read`);
  }
});

test("client streaming: init shapes in become real messages; one answer out", async ({ clients }) => {
  for (const [name, client] of clients) {
    probe.uploads.length = 0;
    async function* requests() {
      yield { part: { case: "metadata" as const, value: { filename: "up.bin" } } };
      yield { part: { case: "chunk" as const, value: new Uint8Array(5) } };
      yield { part: { case: "chunk" as const, value: new Uint8Array(7) } };
    }
    const file = await client.uploadFile(requests());
    assert.ok(isMessage(file, FileSchema), name);
    assert.equal([file.id, file.filename, file.sizeBytes], ["up", "up.bin", 12n], name);
    assert.equal(probe.uploads, [true, true, true], name);
  }
});

test("a method without implementation answers Unimplemented", async ({ clients }) => {
  const codes = [];
  for (const [, client] of clients) codes.push((await failure(client.deleteFile({ fileId: "x" }))).code);
  assert.equal(codes, [Code.Unimplemented, Code.Unimplemented]);
});

test("the gateway's shutdown signal aborts the handlers in flight", async () => {
  // A transport of its own: the shutdown it tests would end the calls of every later test.
  const shutdown = new AbortController();
  const direct = createClient(
    FilesService,
    createDirectTransport([[FilesService, impl]], { interceptors, shutdownSignal: shutdown.signal }),
  );
  probe.started.length = 0;
  probe.signalReasons.length = 0;
  const pending = failure(direct.getFile({ fileId: "wait" }));
  await eventually(() => probe.started.length, "the handler started");
  shutdown.abort();
  assert.is((await pending).code, Code.Canceled);
  assert.is(probe.signalReasons.length, 1);
});

test.run();
