/**
 * The one way a key comes into being (POST /keys, the operator, the PKCE exchange): a fresh
 * secret, stored only as its hash, and a creator that must be a current member (the organization
 * owner when none is named).
 *
 * @module
 */
import type { Transaction } from "sequelize";
import { gatewayError } from "../../../wire/errors.js";
import { hashKey, maskKey, newKeySecret } from "../../platform/secrets/key-secret.js";
import { ApiKeyRow } from "../../platform/db/models.js";
import { isMember, ownerOf } from "../members/member-store.js";
import type { RateLimitColumns } from "../../engine/admission/rate-limit-settings.js";

/** Its limits per minute (`svc_rate_limit`) are optional: a key is issued without any by default. */
export interface KeyToIssue extends Partial<RateLimitColumns> {
  organizationId: string;
  workspaceId: string;
  creatorUserId: string | null;
  name: string;
  isManagement: boolean;
  limitMicros: string | null;
  limitReset: string | null;
  includeByokInLimit: boolean;
  expiresAt: Date | null;
  /** An intern's own key (server/services/interns/intern-keys.ts), confined to that intern. */
  internId?: string;
}

/** `secret` is generated unless given (GATEWAY_BOOTSTRAP_KEY chooses the first management key's). */
export async function issueKey(
  key: KeyToIssue,
  transaction?: Transaction,
  secret = newKeySecret(),
): Promise<{ row: ApiKeyRow; secret: string }> {
  if (key.creatorUserId !== null && !(await isMember(key.organizationId, key.creatorUserId, transaction))) {
    throw gatewayError(400, `creator_user_id '${key.creatorUserId}' is not a member of this organization`);
  }
  // `creator_user_id` is a string; a key minted for no member belongs to the owner.
  const creatorUserId = key.creatorUserId ?? (await ownerOf(key.organizationId, transaction));
  const row = await ApiKeyRow.create(
    { ...key, creatorUserId, hash: hashKey(secret), label: maskKey(secret) },
    { transaction },
  );
  return { row, secret };
}

/** An organization's first management key (bootstrap, operator): no limit, no expiry. */
export function issueManagementKey(
  scope: { organizationId: string; workspaceId: string; creatorUserId: string | null },
  name: string,
  transaction?: Transaction,
  secret?: string,
): Promise<{ row: ApiKeyRow; secret: string }> {
  const key = {
    ...scope,
    name,
    isManagement: true,
    limitMicros: null,
    limitReset: null,
    includeByokInLimit: false,
    expiresAt: null,
  };
  return issueKey(key, transaction, secret);
}

export function futureDate(date: Date): Date {
  if (date.getTime() <= Date.now()) throw gatewayError(400, "expires_at must lie in the future");
  return date;
}
