import type { Transaction } from "sequelize";
import { gatewayError } from "../../../wire/errors.js";
import { ApiKeyRow } from "../../platform/db/models.js";
import { issueKey } from "../keys/key-issuer.js";
import { isMember } from "../members/member-store.js";
import type { InternRow } from "./intern-store.js";

/**
 * An intern's own API key: issued at each provisioning (its plaintext goes only to the intern's
 * host, the database keeps its hash like every key's), confined to that intern by the scope check
 * (platform/rpc/scope.ts), and revoked whenever the intern stops running. Through the model, so this
 * instance's key cache drops a revoked key at commit.
 */
export async function issueInternKey(intern: InternRow, transaction: Transaction): Promise<string> {
  // A creator who left the organization no longer lends their membership to the intern.
  if (intern.creatorUserId !== null && !(await isMember(intern.organizationId, intern.creatorUserId, transaction))) {
    throw gatewayError(403, `The creator of intern ${intern.id} is no longer a member of this organization`);
  }
  await revokeInternKeys(intern.id, transaction);
  const { secret } = await issueKey(
    {
      organizationId: intern.organizationId,
      workspaceId: intern.workspaceId,
      creatorUserId: intern.creatorUserId,
      name: `intern ${intern.name}`,
      isManagement: false,
      limitMicros: null,
      limitReset: null,
      includeByokInLimit: false,
      expiresAt: null,
      internId: intern.id,
    },
    transaction,
  );
  return secret;
}

export async function revokeInternKeys(internId: string, transaction?: Transaction): Promise<void> {
  await ApiKeyRow.destroy({ where: { internId }, transaction });
}
