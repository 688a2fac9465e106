import type { DescMessage, JsonValue, Message } from "@bufbuild/protobuf";
import { reflect } from "@bufbuild/protobuf/reflect";
import { envelope, json_reply } from "../gen/gateway/v1/options_pb.js";
import { optionOf } from "../wire/proto-options.js";
import { setMember, wireJson } from "../wire/json.js";

/** A response message as the API's JSON (see wire/json.ts). */
export function encodeResponse(schema: DescMessage, message: Message): JsonValue {
  return wireJson(schema, message);
}

/** The envelope member that asks for a plain JSON reply instead of a stream, if it is the one set. */
export function jsonReplyOf(schema: DescMessage, message: Message): boolean {
  if (!optionOf(schema, envelope)) return false;
  const member = setMember(reflect(schema, message));
  return member !== undefined && optionOf(member, json_reply);
}
