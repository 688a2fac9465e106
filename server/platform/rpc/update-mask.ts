import type { DescMessage, Message } from "@bufbuild/protobuf";
import { reflect } from "@bufbuild/protobuf/reflect";
import type { FieldMask } from "@bufbuild/protobuf/wkt";
import { gatewayError } from "../../../wire/errors.js";

/**
 * Which fields a PATCH changes. REST callers get `update_mask` filled by the facade from the JSON
 * keys they sent (so `"limit": null` clears the limit); gRPC callers may send a mask, or else every
 * field they set counts. Addressing fields (path variables) are never part of the change.
 */
export function changedFields(
  schema: DescMessage,
  message: Message & { updateMask?: FieldMask },
  addressing: readonly string[],
): Set<string> {
  const updatable = schema.fields.filter((f) => f.name !== "update_mask" && !addressing.includes(f.name));
  const names = new Set(updatable.map((f) => f.name));
  if (message.updateMask && message.updateMask.paths.length > 0) {
    for (const path of message.updateMask.paths) {
      if (!names.has(path)) throw gatewayError(400, `update_mask names a field that cannot be updated: ${path}`);
    }
    return new Set(message.updateMask.paths);
  }
  const reflected = reflect(schema, message);
  return new Set(updatable.filter((f) => reflected.isSet(f)).map((f) => f.name));
}
