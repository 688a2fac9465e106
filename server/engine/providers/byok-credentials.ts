import { open } from "../../platform/secrets/secret-box.js";
import { ByokCredentialRow } from "../../platform/db/governance-models.js";

/**
 * The one place a stored provider key is opened: the newest enabled credential of a provider in a
 * workspace, for calls made on the workspace's behalf. The secret stays in memory only.
 */
export type UsableCredential =
  | { state: "found"; id: string; secret: string }
  | { state: "missing" }
  /** Sealed under another master key (GATEWAY_MASTER_KEY changed) or damaged. */
  | { state: "unreadable"; id: string };

export async function usableCredential(
  masterKey: Buffer,
  scope: { organizationId: string; workspaceId: string; provider: string },
): Promise<UsableCredential> {
  const row = await ByokCredentialRow.findOne({
    where: { ...scope, disabled: false },
    order: [
      ["createdAt", "DESC"],
      ["id", "ASC"],
    ],
  });
  if (!row) return { state: "missing" };
  try {
    return { state: "found", id: row.id, secret: open(masterKey, row.sealedKey, row.id) };
  } catch {
    return { state: "unreadable", id: row.id };
  }
}
