import type { DescField, DescMessage } from "@bufbuild/protobuf";
import { findField } from "../wire/json-input.js";

/** One step of a dotted field path, e.g. `user.id`: the field and the key it has in the request JSON. */
export interface PathStep {
  key: string;
  field: DescField;
}

/**
 * Resolves a dotted field path (proto or JSON names) through singular message fields; undefined
 * when a name is not a field. Path variables are resolved once per route (route-table.ts), query
 * keys once per route and key (request-decoder.ts).
 */
export function resolvePath(schema: DescMessage, names: readonly string[]): PathStep[] | undefined {
  const steps: PathStep[] = [];
  let current: DescMessage | undefined = schema;
  for (const name of names) {
    const field: DescField | undefined = current && findField(current, name);
    if (!field) return undefined;
    steps.push({ key: field.name, field });
    current =
      field.fieldKind === "message" && !field.message.typeName.startsWith("google.protobuf.")
        ? field.message
        : undefined;
  }
  return steps;
}
