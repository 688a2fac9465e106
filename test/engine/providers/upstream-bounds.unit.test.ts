import http from "node:http";
import type { AddressInfo } from "node:net";
import { Readable, pipeline } from "node:stream";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { readLines, MAX_JSONL_LINE_BYTES } from "../../../server/engine/providers/line-reader.js";
import type { UpstreamTarget } from "../../../server/engine/providers/provider.js";
import { readSse, MAX_SSE_EVENT_CHARS, MAX_SSE_LINE_BYTES, type SseEvent } from "../../../wire/sse-reader.js";
import {
  callUpstream,
  discardBody,
  readJsonObject,
  readUpstreamSse,
  MAX_JSON_ANSWER_BYTES,
} from "../../../server/engine/providers/upstream-http.js";
import { failure, signal } from "./adapter-helpers.js";

/**
 * A provider chosen by a tenant may answer with a body, a line or an event that never ends: each
 * reader fails as "protocol" once past its limit and stops reading, instead of holding it all.
 * The endless bodies here give up 1 MiB past the limit, so a reader that lost its limit ends
 * (and the test fails) instead of hanging.
 */
const test = suite<{ server: http.Server; target: UpstreamTarget; closes: Array<Promise<boolean>> }>(
  "providers: bounded upstream bodies",
);

const MIB = 1024 * 1024;
const API_KEY = "sk-bounds-secret-key";

interface Endless {
  body: AsyncGenerator<Uint8Array>;
  /** Bytes handed to the reader, and whether the reader closed the body before its end. */
  stats: { produced: number; stoppedEarly: boolean };
}

/** `head` once, then `unit` over and over in 1 MiB chunks until 1 MiB past `limit`. */
function endless(head: string, unit: string, limit: number): Endless {
  const chunk = Buffer.from(unit.repeat(Math.ceil(MIB / unit.length)));
  const stats = { produced: 0, stoppedEarly: false };
  async function* body(): AsyncGenerator<Uint8Array> {
    let ended = false;
    try {
      stats.produced += head.length;
      yield Buffer.from(head);
      while (stats.produced <= limit + MIB) {
        stats.produced += chunk.length;
        yield chunk;
      }
      ended = true;
    } finally {
      stats.stoppedEarly = !ended;
    }
  }
  return { body: body(), stats };
}

/** Collects what `items` yields into `into` until it ends or throws. */
async function drain<T>(items: AsyncIterable<T>, into: T[] = []): Promise<T[]> {
  for await (const item of items) into.push(item);
  return into;
}

/** The body was closed before its end, so at most one chunk past the limit was read. */
function assertStoppedEarly(stats: Endless["stats"]): void {
  assert.ok(stats.stoppedEarly, `the reader read all ${stats.produced} bytes`);
}

test("an endless SSE line fails as a protocol error past MAX_SSE_LINE_BYTES", async () => {
  const { body, stats } = endless("data: ok\n\ndata: ", "a", MAX_SSE_LINE_BYTES);
  const events: SseEvent[] = [];
  const error = await failure(drain(readUpstreamSse(body), events));
  assert.is(error.failure, "protocol");
  assert.is(error.message, "an upstream stream line is longer than 16 MiB");
  assert.equal(events, [{ event: undefined, data: "ok" }]);
  assertStoppedEarly(stats);
});

test("an endless SSE event of short data lines fails as a protocol error past MAX_SSE_EVENT_CHARS", async () => {
  const { body, stats } = endless("event: delta\n", `data: ${"0123456789".repeat(5)}\n`, MAX_SSE_EVENT_CHARS);
  const error = await failure(drain(readUpstreamSse(body)));
  assert.is(error.failure, "protocol");
  assert.is(error.message, "an upstream stream event is longer than 16 Mi characters");
  assertStoppedEarly(stats);
});

test("an endless JSONL line fails as a protocol error past MAX_JSONL_LINE_BYTES", async () => {
  const { body, stats } = endless('{"a":1}\n{"b":"', "b", MAX_JSONL_LINE_BYTES);
  const lines: string[] = [];
  const error = await failure(drain(readLines(body), lines));
  assert.is(error.failure, "protocol");
  assert.is(error.message, "a line of the upstream file is longer than 64 MiB");
  assert.equal(lines, ['{"a":1}']);
  assertStoppedEarly(stats);
});

const SSE =
  '\ufeff: keep-alive\r\n\r\nevent: message_start\ndata: {"a":"é😀"}\n\n' +
  "data: line1\ndata:line2\r\n\r\ndata\n\ndata: [DONE]\n\ndata: cut";
const SSE_EVENTS: SseEvent[] = [
  { event: "message_start", data: '{"a":"é😀"}' },
  { event: undefined, data: "line1\nline2" },
  { event: undefined, data: "" },
  { event: undefined, data: "[DONE]" },
];
const JSONL = '\ufeff{"a":"é😀"}\r\n\n  {"b":2}  \n{"c":3}';
const JSONL_LINES = ['{"a":"é😀"}', '{"b":2}', '{"c":3}'];

async function* parts(bytes: Buffer, cuts: number[]): AsyncGenerator<Uint8Array> {
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    yield bytes.subarray(from, cut);
    from = cut;
  }
}

test("bodies split at any byte, also inside UTF-8 sequences, read as when whole", async () => {
  for (const [text, read, expected] of [
    [SSE, readSse, SSE_EVENTS],
    [JSONL, readLines, JSONL_LINES],
  ] as const) {
    const bytes = Buffer.from(text, "utf8");
    for (let at = 0; at <= bytes.length; at++) {
      assert.equal(await drain<unknown>(read(parts(bytes, [at]))), expected, `split at ${at}`);
      assert.equal(
        await drain<unknown>(read(parts(bytes, [at, Math.min(at + 3, bytes.length)]))),
        expected,
        `split at ${at} and ${at + 3}`,
      );
    }
    assert.equal(await drain<unknown>(read(parts(bytes, [...bytes.keys()]))), expected, "one byte at a time");
  }
});

/**
 * Answers for the HTTP-level reads: `/endless` streams a JSON string that never closes (giving up
 * only at twice the limit: kernel and stream buffers on a loaded machine can hold megabytes the
 * reader never asked for, which must not let the server finish), `/declared` announces a length
 * past the limit, `/small` is a normal answer in two writes. Each response reports, when it closes,
 * whether it was sent to its end.
 */
function answer(closes: Array<Promise<boolean>>) {
  return (req: http.IncomingMessage, res: http.ServerResponse) => {
    closes.push(new Promise((resolve) => res.once("close", () => resolve(res.writableFinished))));
    if (req.url === "/declared") {
      res.writeHead(200, { "content-type": "application/json", "content-length": String(MAX_JSON_ANSWER_BYTES + 1) });
      // Breaking off makes a reader that waits for the body fail as "connect", not hang.
      res.write('{"a":"', () => res.destroy());
      return;
    }
    if (req.url === "/small") {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"ok"');
      res.end(":true}");
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    const chunk = Buffer.alloc(MIB, "a");
    async function* body(): AsyncGenerator<Buffer> {
      yield Buffer.from(`{"key":"${API_KEY}","a":"`);
      for (let sent = 0; sent <= 2 * MAX_JSON_ANSWER_BYTES; sent += chunk.length) yield chunk;
      yield Buffer.from('"}');
    }
    pipeline(Readable.from(body()), res, () => undefined);
  };
}

test.before(async (ctx) => {
  ctx.closes = [];
  ctx.server = http.createServer(answer(ctx.closes));
  await new Promise<void>((resolve) => ctx.server.listen(0, "127.0.0.1", resolve));
  const { port } = ctx.server.address() as AddressInfo;
  ctx.target = {
    kind: "openai",
    baseUrl: `http://127.0.0.1:${port}`,
    apiKey: API_KEY,
    upstreamModelId: "m",
    timeoutMs: 30_000,
  };
});

test.after(async ({ server }) => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

test.before.each(({ closes }) => {
  closes.length = 0;
});

test(
  "an endless JSON answer fails as a protocol error past " + "MAX_JSON_ANSWER_BYTES and its connection is closed",
  async ({ target, closes }) => {
    const response = await callUpstream(target, { method: "GET", path: "/endless", headers: {} }, signal());
    const error = await failure(readJsonObject(response));
    assert.is(error.failure, "protocol");
    assert.is(error.message, "the upstream answer is larger than 256 MiB");
    assert.is(await closes[0], false, "the answer was cut off, not read to its end");
  },
);

test(
  "an answer declaring a length past MAX_JSON_ANSWER_BYTES fails before it is read, " + "also when only discarded",
  async ({ target }) => {
    for (const read of [readJsonObject, discardBody]) {
      const response = await callUpstream(target, { method: "GET", path: "/declared", headers: {} }, signal());
      const error = await failure(read(response));
      assert.is(error.failure, "protocol");
      assert.is(error.message, "the upstream answer is larger than 256 MiB");
    }
  },
);

test("a JSON answer in pieces is read whole", async ({ target }) => {
  const response = await callUpstream(target, { method: "GET", path: "/small", headers: {} }, signal());
  assert.equal(await readJsonObject(response), { ok: true });
});

test.run();
