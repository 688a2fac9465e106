import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ByokKeySchema, type ByokKey } from "../../../gen/gateway/v1/byok_pb.js";
import type { ByokCredentialRow } from "../../platform/db/governance-models.js";

/** A credential as the API shows it: never the key, only the label made from it at creation. */
export function toByokKey(row: ByokCredentialRow): ByokKey {
  return create(ByokKeySchema, {
    id: row.id,
    provider: row.provider,
    name: row.name ?? undefined,
    label: row.label,
    workspaceId: row.workspaceId,
    disabled: row.disabled,
    createdAt: timestampFromDate(row.createdAt),
  });
}

/**
 * "sk-p...c123": up to 4 characters at each end, but never more than a quarter of the key at
 * either end, so a short key is not half given away (an 8-character key shows 2 + 2, a very
 * short one nothing).
 */
export function maskProviderKey(key: string): string {
  const chars = [...key];
  const visible = Math.min(4, Math.floor(chars.length / 4));
  if (visible === 0) return "...";
  return `${chars.slice(0, visible).join("")}...${chars.slice(-visible).join("")}`;
}
