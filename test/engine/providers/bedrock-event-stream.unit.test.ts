import { EventStreamCodec } from "@smithy/eventstream-codec";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";
import type { IncomingMessage } from "node:http";
import { Readable } from "node:stream";
import * as assert from "uvu/assert";
import {
  eventStreamMessages,
  payloadJson,
  type StreamMessage,
} from "../../../server/engine/providers/bedrock/event-stream.js";
import type { UpstreamResponse } from "../../../server/engine/providers/upstream-http.js";
import { suite } from "../../support/suite.js";
import { failure } from "./adapter-helpers.js";

const test = suite("providers: Bedrock event stream framing");
const codec = new EventStreamCodec(toUtf8, fromUtf8);

function frame(name: string, payload: object): Buffer {
  return Buffer.from(
    codec.encode({
      headers: { ":message-type": { type: "string", value: "event" }, ":event-type": { type: "string", value: name } },
      body: fromUtf8(JSON.stringify(payload)),
    }),
  );
}

/** A 2xx response whose body arrives in exactly these chunks. */
function responseOf(chunks: Buffer[]): UpstreamResponse {
  const body = Readable.from(chunks, { objectMode: false }) as unknown as IncomingMessage;
  return { status: 200, headers: {}, body, signal: new AbortController().signal };
}

async function read(chunks: Buffer[]): Promise<StreamMessage[]> {
  const out: StreamMessage[] = [];
  for await (const message of eventStreamMessages(responseOf(chunks))) out.push(message);
  return out;
}

test("frames split across chunks and several frames in one chunk decode in order", async () => {
  const frames = [
    frame("messageStart", { role: "assistant" }),
    frame("contentBlockDelta", { delta: { text: "Hi" } }),
    frame("messageStop", { stopReason: "end_turn" }),
  ];
  const all = Buffer.concat(frames);
  // Cut at 1 byte (inside the prelude), in the middle of the second frame, and keep the third whole with the rest.
  const cuts = [1, (frames[0]?.length ?? 0) + 5, all.length];
  const chunks: Buffer[] = [];
  let from = 0;
  for (const to of cuts) {
    chunks.push(all.subarray(from, to));
    from = to;
  }
  const messages = await read(chunks);
  assert.equal(
    messages.map((m) => m.name),
    ["messageStart", "contentBlockDelta", "messageStop"],
  );
  assert.equal(payloadJson(messages[1] as StreamMessage), { delta: { text: "Hi" } });
});

test("a body ending inside a frame is cut; a corrupted frame is protocol", async () => {
  const whole = frame("messageStart", { role: "assistant" });
  const cut = await failure(read([whole, frame("contentBlockDelta", { delta: { text: "x" } }).subarray(0, 20)]));
  assert.is(cut.failure, "cut");
  const corrupted = Buffer.from(whole);
  corrupted[corrupted.length - 6] = (corrupted[corrupted.length - 6] ?? 0) ^ 0xff;
  assert.is((await failure(read([corrupted]))).failure, "protocol");
});

test.run();
