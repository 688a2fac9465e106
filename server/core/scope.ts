import type { Transaction } from "sequelize";
import { WorkspaceRow } from "../db/models.js";
import type { Caller } from "./auth.js";
import { gatewayError } from "./errors.js";
import { UUID_PATTERN } from "./text-rules.js";

/**
 * The one scope check: every lookup filters by the caller's organization, and a resource of
 * another organization is answered like a missing one (404), never with a 403 that confirms it.
 */
export function inOrganization(caller: Caller): { organizationId: string } {
  return { organizationId: caller.organization.id };
}

/** A workspace of the caller's organization by UUID or slug, optionally locked for update. */
export async function findWorkspace(
  caller: Caller,
  ref: string,
  options: { transaction?: Transaction; lock?: boolean } = {},
): Promise<WorkspaceRow> {
  const where = UUID_PATTERN.test(ref) ? { ...inOrganization(caller), id: ref.toLowerCase() } : { ...inOrganization(caller), slug: ref };
  const workspace = await WorkspaceRow.findOne({
    where,
    transaction: options.transaction,
    ...(options.lock && options.transaction ? { lock: options.transaction.LOCK.UPDATE } : {}),
  });
  if (!workspace) throw gatewayError(404, `Workspace '${ref}' not found`);
  return workspace;
}
