import type { DescMethod } from "@bufbuild/protobuf";
import { max_body_bytes } from "../gen/gateway/v1/options_pb.js";
import { optionOf } from "./proto-options.js";

/** A method without `(gateway.v1.max_body_bytes)` takes 1 MiB, as options.proto says. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/**
 * The largest request body a method takes, one rule for every door: the REST facade's routes and
 * the core's Connect, gRPC-Web and gRPC handlers. A Connect, gRPC-Web or gRPC call is held to it per message,
 * inflated size included: a unary call's one message is its whole body, and a client-streaming
 * upload's messages stay streamed, each within the method's limit (its service counts the total).
 */
export function maxBodyBytesOf(method: DescMethod): number {
  return Number(optionOf(method, max_body_bytes)) || DEFAULT_MAX_BODY_BYTES;
}
