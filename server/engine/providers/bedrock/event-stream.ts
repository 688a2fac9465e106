import type { JsonObject } from "@bufbuild/protobuf";
import { EventStreamCodec } from "@smithy/eventstream-codec";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";
import { isObject } from "../json-shape.js";
import { UpstreamError } from "../provider.js";
import { providerErrorMessage } from "../upstream-error-body.js";
import { parseEventData, upstreamChunks, type UpstreamResponse } from "../upstream-http.js";

/**
 * The AWS event stream framing of ConverseStream (`application/vnd.amazon.eventstream`): binary
 * frames of a length prelude, typed headers and a JSON payload, each checked by CRC. The codec
 * decodes whole frames only, so the bytes are gathered here until a frame is complete: a frame
 * may span chunks, and a chunk may hold several.
 */
export const EVENT_STREAM_CONTENT_TYPE = "application/vnd.amazon.eventstream";

/** Bedrock's payload limit and its headers' limit, with the prelude: a longer prelude is not a frame. */
const MAX_FRAME_BYTES = 16 * 1024 * 1024 + 128 * 1024 + 16;
const MIN_FRAME_BYTES = 16;

export interface StreamMessage {
  /** `event`, `exception` or `error`. */
  messageType: string;
  /** The event's or exception's name (`contentBlockDelta`, `throttlingException`, …). */
  name: string;
  headers: MessageHeaders;
  payload: Uint8Array;
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);

type MessageHeaders = ReturnType<EventStreamCodec["decode"]>["headers"];

/** The frames of a 2xx ConverseStream body. A body that ends inside a frame was cut. */
export async function* eventStreamMessages(response: UpstreamResponse): AsyncGenerator<StreamMessage, void, undefined> {
  let pending: Buffer = Buffer.alloc(0);
  for await (const chunk of upstreamChunks(response)) {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= 4) {
      const length = pending.readUInt32BE(0);
      if (length < MIN_FRAME_BYTES || length > MAX_FRAME_BYTES)
        throw new UpstreamError("protocol", "the upstream stream is not an AWS event stream");
      if (pending.length < length) break;
      yield decodeFrame(pending.subarray(0, length));
      pending = pending.subarray(length);
    }
  }
  if (pending.length > 0) throw new UpstreamError("cut", "the upstream stream ended inside an event");
}

function decodeFrame(frame: Buffer): StreamMessage {
  let decoded: ReturnType<EventStreamCodec["decode"]>;
  try {
    decoded = codec.decode(frame);
  } catch {
    // A checksum that does not match, or headers that do not parse.
    throw new UpstreamError("protocol", "an upstream event stream frame is malformed");
  }
  const { headers, body } = decoded;
  const messageType = stringHeader(headers, ":message-type") ?? "";
  const name =
    stringHeader(
      headers,
      messageType === "exception" ? ":exception-type" : messageType === "error" ? ":error-code" : ":event-type",
    ) ?? "";
  return { messageType, name, headers, payload: body };
}

export function stringHeader(headers: MessageHeaders, name: string): string | undefined {
  const header = headers[name];
  return header?.type === "string" ? header.value : undefined;
}

/** An event's JSON payload. */
export function payloadJson(message: StreamMessage): JsonObject {
  return parseEventData(toUtf8(message.payload));
}

/**
 * The HTTP status each of ConverseStream's exceptions stands for, as its API reference gives
 * it; an exception it may add later is a failure of the upstream, hence 502.
 */
const STATUS_OF_EXCEPTION: Readonly<Record<string, number>> = {
  validationException: 400,
  throttlingException: 429,
  modelStreamErrorException: 424,
  internalServerException: 500,
  serviceUnavailableException: 503,
  modelTimeoutException: 408,
};

/** An exception (or error) frame sent after the 2xx status, as the error a status would have been. */
export function streamFailure(message: StreamMessage, apiKey: string): UpstreamError {
  const key = message.name.charAt(0).toLowerCase() + message.name.slice(1);
  const status = Object.hasOwn(STATUS_OF_EXCEPTION, key) ? (STATUS_OF_EXCEPTION[key] ?? 502) : 502;
  let text: string | undefined;
  if (message.messageType === "error") {
    text = providerErrorMessage({ message: stringHeader(message.headers, ":error-message") ?? "" }, apiKey);
  } else {
    let payload: unknown;
    try {
      payload = JSON.parse(toUtf8(message.payload));
    } catch {
      payload = undefined;
    }
    text = isObject(payload) ? providerErrorMessage(payload, apiKey) : undefined;
  }
  const name = /^[A-Za-z]{1,64}$/.test(message.name) ? message.name : "an error";
  return new UpstreamError("status", text ?? `the upstream stream reported ${name}`, { status });
}
