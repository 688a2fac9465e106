import http from "node:http";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createRouterTransport, type HandlerContext } from "@connectrpc/connect";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { createFacade, type Facade } from "../../facade/facade.js";
import { InternsService } from "../../gen/gateway/v1/interns_pb.js";
import {
  InternChatEventSchema,
  InternFinishReason,
  InternMessageRole,
  InternReplyStatus,
  type InternChatEvent,
  type InternChatRequest,
} from "../../gen/gateway/v1/intern_chat_pb.js";
import { gatewayError } from "../../wire/errors.js";
import { createLogger } from "../../server/platform/logger.js";
import { at } from "../support/http.js";
import { eventually } from "../support/eventually.js";
import { sseData } from "../support/sse.js";

/**
 * The facade's generic rendering of server-streaming RPCs (docs/architecture.md): `text/event-stream`,
 * one `data: <json>` per message rendered as its envelope member alone, `: keepalive` comments,
 * `data: [DONE]`, an error event instead of `[DONE]` when the stream fails, a plain JSON body when
 * the first message is a `json_reply` member, and cancellation of the RPC when the client leaves.
 * The streaming RPC is implemented in the test: this is the facade's unit, not the interns service.
 */

/**
 * What the in-test implementation and the tests tell each other, reset when the suite starts. Both
 * sides wait for the other with `eventually`: a fallback timer would be a time budget, and one
 * started with the suite could run out on a busy machine before the test that needs it runs.
 */
const probe = {
  /** The client has read a keepalive comment. */
  keepaliveSeen: false,
  /** The implementation of the `hang` call saw its ctx.signal aborted. */
  aborted: false,
  requests: [] as InternChatRequest[],
  /** The facade's response of the latest request, and how often a chunk was asked for while it could take no more. */
  response: undefined as http.ServerResponse | undefined,
  pulledWhileFull: 0,
};

/** Chunks of the `flood` stream: far more than the socket and the response buffer hold together. */
const FLOOD_CHUNKS = 200;
const FLOOD_TEXT = "x".repeat(64 * 1024);

const chunk = (id: string, content: string | undefined, finish = InternFinishReason.UNSPECIFIED): InternChatEvent =>
  create(InternChatEventSchema, {
    event: {
      case: "chunk",
      value: {
        id,
        object: "chat.completion.chunk",
        created: 1_700_000_000n,
        model: "test/model",
        choices: [{ index: 0, delta: content === undefined ? {} : { content }, finishReason: finish }],
      },
    },
  });

const finalChunk = (id: string): InternChatEvent =>
  create(InternChatEventSchema, {
    event: {
      case: "chunk",
      value: {
        id,
        object: "chat.completion.chunk",
        created: 1_700_000_001n,
        model: "test/model",
        choices: [],
        sessionId: "sess-1",
      },
    },
  });

/** The intern id in the path picks the behaviour. */
async function* chatCompletions(req: InternChatRequest, ctx: HandlerContext): AsyncGenerator<InternChatEvent> {
  probe.requests.push(req);
  switch (req.internId) {
    case "ok":
      yield chunk("c1", `echo:${req.messages[0]?.content ?? ""}`);
      yield chunk("c1", " world");
      yield chunk("c1", undefined, InternFinishReason.STOP);
      yield finalChunk("c1");
      return;
    case "slow":
      yield chunk("c2", "before");
      // Wait until the client has seen a keepalive, so the test does not depend on timing.
      await eventually(() => probe.keepaliveSeen, "the client reads a keepalive");
      yield chunk("c2", "after");
      yield finalChunk("c2");
      return;
    case "fail":
      yield chunk("c3", "partial");
      throw gatewayError(502, "The intern connection was lost", { reason: "intern_unreachable", retryable: true });
    case "fail-plain":
      yield chunk("c4", "partial");
      throw new ConnectError("the run went away", Code.Unavailable);
    case "fail-first":
      throw gatewayError(409, "The intern is not running", { reason: "intern_not_running", retryable: false });
    case "steered":
      yield create(InternChatEventSchema, {
        event: { case: "steered", value: { sessionId: "sess-9", status: InternReplyStatus.STEERED } },
      });
      yield chunk("never", "must not be rendered");
      return;
    case "flood":
      for (let i = 0; i < FLOOD_CHUNKS; i++) {
        if (probe.response?.writableNeedDrain) probe.pulledWhileFull += 1;
        yield chunk("c6", FLOOD_TEXT);
      }
      yield finalChunk("c6");
      return;
    case "hang":
      yield chunk("c5", "waiting");
      await eventually(() => ctx.signal.aborted, "the call is aborted");
      probe.aborted = true;
      return;
    default:
      throw gatewayError(404, "Not found", { reason: "not_found", retryable: false });
  }
}

const test = suite<{ server: http.Server; facade: Facade; url: string }>("facade sse");

test.before(async (ctx) => {
  probe.keepaliveSeen = false;
  probe.aborted = false;
  ctx.facade = createFacade({
    services: [InternsService],
    transport: createRouterTransport((router) => router.service(InternsService, { chatCompletions })),
    log: createLogger("silent"),
    sseKeepaliveMs: 50,
    // The stub service has no authentication to ask first.
    checkCredentialsFirst: false,
  });
  ctx.server = http.createServer((req, res) => {
    probe.response = res;
    ctx.facade.handle(req, res);
  });
  await new Promise<void>((resolve) => ctx.server.listen(0, "127.0.0.1", resolve));
  const { port } = ctx.server.address() as AddressInfo;
  ctx.url = `http://127.0.0.1:${port}`;
});

test.after(async (ctx) => {
  ctx.facade.stop();
  ctx.server.closeAllConnections();
  await new Promise<void>((resolve) => ctx.server.close(() => resolve()));
});

const USER_PROMPT = { messages: [{ role: "user", content: "hello" }], stream: true };

interface StreamReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** Raw SSE frames, without the blank-line separators. */
  frames: string[];
  /** The events' payloads (support/sse.ts), keepalives left out. */
  data: unknown[];
}

/** POSTs to a chat route and reads the whole response; `onText` sees the text received so far. */
function post(
  base: string,
  path: string,
  body: unknown,
  onText?: (text: string, client: { leave(): void }) => void,
): Promise<StreamReply> {
  const url = new URL(base);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    let leaving = false;
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: "POST",
        path,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(payload) },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        const finish = () => {
          const frames = text.split("\n\n").filter((frame) => frame !== "");
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, frames, data: sseData(text) });
        };
        res.on("data", (piece: string) => {
          text += piece;
          onText?.(text, {
            leave: () => {
              leaving = true;
              req.destroy();
            },
          });
        });
        res.on("end", finish);
        res.on("close", finish);
      },
    );
    req.on("error", (err) => {
      if (!leaving) reject(err);
    });
    req.end(payload);
  });
}

const parse = (data: string): unknown => JSON.parse(data);

test("a stream is text/event-stream: one data event per message, member alone, then [DONE]", async ({ url }) => {
  const res = await post(url, "/api/v1/interns/ok/chat/completions", USER_PROMPT);
  assert.is(res.status, 200);
  assert.match(String(res.headers["content-type"]), /^text\/event-stream\b/);
  assert.is(res.headers["cache-control"], "no-cache");
  assert.ok(res.text.endsWith("\n\n"), "every frame ends with a blank line");
  for (const frame of res.frames)
    assert.ok(frame === ": keepalive" || /^data: [^\n]*$/.test(frame), `unexpected frame ${JSON.stringify(frame)}`);

  assert.is(res.data.length, 5);
  assert.is(res.data.at(-1), "[DONE]");
  const events = res.data.slice(0, -1);
  for (const event of events) {
    assert.is(at(event, "chunk"), undefined, "no envelope wrapper");
    assert.is(at(event, "object"), "chat.completion.chunk");
    assert.is(at(event, "id"), "c1");
    assert.type(at(event, "created"), "number", "int64 renders as a JSON number");
    assert.is(at(event, "model"), "test/model");
  }
  assert.equal(Object.keys(events[0] as object).slice(0, 4), ["id", "object", "created", "model"]);
  assert.is(at(events[0], "created"), 1_700_000_000);
  assert.is(
    at(events[0], "choices", 0, "delta", "content"),
    "echo:hello",
    "the request message was built from the body",
  );
  assert.is(at(events[0], "choices", 0, "finish_reason"), null);
  assert.is(at(events[1], "choices", 0, "delta", "content"), " world");
  assert.is(at(events[2], "choices", 0, "finish_reason"), "stop");
  assert.equal(at(events[3], "choices"), []);
  assert.is(at(events[3], "session_id"), "sess-1");
  assert.is(at(events[3], "usage"), null);

  const request = probe.requests.find((r) => r.internId === "ok");
  assert.ok(request, "the implementation was called");
  assert.is(request?.messages[0]?.role, InternMessageRole.USER);
  assert.is(request?.stream, true);
});

test("keepalive comments are written while the implementation is silent", async ({ url }) => {
  const res = await post(url, "/api/v1/interns/slow/chat/completions", USER_PROMPT, (text) => {
    if (text.includes(": keepalive\n\n")) probe.keepaliveSeen = true;
  });
  assert.is(res.status, 200);
  const before = res.frames.findIndex((f) => f.includes('"before"'));
  const keepalive = res.frames.indexOf(": keepalive");
  const after = res.frames.findIndex((f) => f.includes('"after"'));
  assert.ok(before >= 0 && after >= 0, res.text);
  assert.ok(
    keepalive > before && keepalive < after,
    `a keepalive between the two events: ${JSON.stringify(res.frames)}`,
  );
  assert.is(res.data.at(-1), "[DONE]");
});

test("a stream that fails midway ends with an error event and no [DONE]", async ({ url }) => {
  const res = await post(url, "/api/v1/interns/fail/chat/completions", USER_PROMPT);
  assert.is(res.status, 200, "the status was sent with the first event");
  assert.match(String(res.headers["content-type"]), /^text\/event-stream\b/);
  assert.not.ok(res.data.includes("[DONE]"), res.text);
  assert.is(res.data.length, 2);
  assert.is(at(res.data[0], "choices", 0, "delta", "content"), "partial");
  assert.equal(res.data[1], {
    error: {
      code: 502,
      message: "The intern connection was lost",
      metadata: { reason: "intern_unreachable", retryable: true },
    },
  });

  const plain = await post(url, "/api/v1/interns/fail-plain/chat/completions", USER_PROMPT);
  assert.not.ok(plain.data.includes("[DONE]"), plain.text);
  assert.equal(plain.data.at(-1), { error: { code: 503, message: "the run went away" } });
});

test("a stream that fails before its first message is a plain error response", async ({ url }) => {
  const res = await post(url, "/api/v1/interns/fail-first/chat/completions", USER_PROMPT);
  assert.is(res.status, 409);
  assert.is(res.headers["content-type"], "application/json");
  assert.equal(parse(res.text), {
    error: {
      code: 409,
      message: "The intern is not running",
      metadata: { reason: "intern_not_running", retryable: false },
    },
  });
});

test("a first message carrying the json_reply member is answered as plain JSON", async ({ url }) => {
  const res = await post(url, "/api/v1/interns/steered/chat/completions", {
    session_id: "sess-9",
    messages: [{ role: "tool", tool_call_id: "call_1", content: "allow_once" }],
  });
  assert.is(res.status, 200);
  assert.is(res.headers["content-type"], "application/json");
  assert.equal(parse(res.text), { session_id: "sess-9", status: "steered" });
  assert.not.ok(res.text.includes("data:"));
});

test("a client that disconnects mid-stream cancels the implementation", async ({ url }) => {
  const res = await post(url, "/api/v1/interns/hang/chat/completions", USER_PROMPT, (text, client) => {
    if (text.includes('"waiting"')) client.leave();
  });
  assert.ok(res.data.length >= 1, "the first event arrived before the client left");
  assert.ok(await eventually(() => probe.aborted, "the implementation sees ctx.signal aborted"));
});

test("the facade still serves streams after a client left", async ({ url }) => {
  const res = await post(url, "/api/v1/interns/ok/chat/completions", USER_PROMPT);
  assert.is(res.status, 200);
  assert.is(res.data.at(-1), "[DONE]");
});

test(
  "a stream is produced only as fast as its client reads: " +
    "no message is asked for while the response cannot take more",
  async ({ url }) => {
    probe.pulledWhileFull = 0;
    const body = JSON.stringify({ messages: [{ role: "user", content: "flood" }] });
    const reply = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = http.request(
        `${url}/api/v1/interns/flood/chat/completions`,
        { method: "POST", headers: { "content-type": "application/json" } },
        resolve,
      );
      req.once("error", reject);
      req.end(body);
    });
    // The client reads nothing until the response's buffer is full, so that the facade must wait.
    reply.pause();
    await eventually(
      () => probe.response?.writableNeedDrain === true,
      "the response's buffer fills while the client does not read",
    );
    let text = "";
    reply.setEncoding("utf8").on("data", (part: string) => (text += part));
    reply.resume();
    await new Promise((resolve) => reply.once("end", resolve));
    const events = sseData(text);
    assert.is(events.length, FLOOD_CHUNKS + 2, "every chunk, the final chunk and [DONE]");
    assert.is(events.at(-1), "[DONE]");
    assert.is(probe.pulledWhileFull, 0, "chunks asked for while the response buffer was full");
  },
);

test.run();
