import type { Transaction } from "sequelize";
import { gatewayError } from "../core/errors.js";
import { hashKey, maskKey, newKeySecret } from "../core/key-secret.js";
import { ApiKeyRow } from "../db/models.js";
import { isMember } from "../members/member-store.js";

/**
 * The one way a key comes into being (POST /keys, the operator, the PKCE exchange): a fresh
 * secret, stored only as its hash, and a creator that must be a current member.
 */
export interface KeyToIssue {
  organizationId: string;
  workspaceId: string;
  creatorUserId: string | null;
  name: string;
  isManagement: boolean;
  limitMicros: string | null;
  limitReset: string | null;
  includeByokInLimit: boolean;
  expiresAt: Date | null;
  /** An intern's own key (server/interns/intern-keys.ts), confined to that intern. */
  internId?: string;
}

export async function issueKey(key: KeyToIssue, transaction?: Transaction): Promise<{ row: ApiKeyRow; secret: string }> {
  if (key.creatorUserId !== null && !(await isMember(key.organizationId, key.creatorUserId, transaction))) {
    throw gatewayError(400, `creator_user_id '${key.creatorUserId}' is not a member of this organization`);
  }
  const secret = newKeySecret();
  const row = await ApiKeyRow.create({ ...key, hash: hashKey(secret), label: maskKey(secret) }, { transaction });
  return { row, secret };
}

export function futureDate(date: Date): Date {
  if (date.getTime() <= Date.now()) throw gatewayError(400, "expires_at must lie in the future");
  return date;
}
