import type { Attributes, FindOptions, Model, ModelStatic, Transaction, WhereOptions } from "sequelize";
import { WorkspaceRow } from "../db/models.js";
import type { Caller } from "./auth.js";
import { gatewayError } from "../../../wire/errors.js";
import { UUID_PATTERN } from "../../../wire/text-rules.js";

/**
 * The one scope check: every lookup filters by the caller's organization, and a resource of
 * another organization is answered like a missing one (404), never with a 403 that confirms it.
 */
export function inOrganization(caller: Caller): { organizationId: string } {
  return { organizationId: caller.organization.id };
}

export interface LookupOptions {
  transaction?: Transaction;
  /** With a transaction: SELECT … FOR UPDATE. */
  lock?: boolean;
  attributes?: FindOptions["attributes"];
}

/**
 * The key's own workspace, for resources that live in exactly one workspace (interns, vaults).
 * The organization comes from the caller's organization row, as in `inOrganization`: that is the
 * row authentication resolved and gated (entitlements), so every scope filter names one source.
 */
export interface WorkspaceScope {
  organizationId: string;
  workspaceId: string;
}

export function workspaceOf(caller: Caller): WorkspaceScope {
  return { ...inOrganization(caller), workspaceId: caller.key.workspaceId };
}

/**
 * A `workspace_id` a request names must be the key's own: there is no fallback to another
 * workspace, and the 404 does not confirm that the named one exists.
 */
export function requireKeyWorkspace(caller: Caller, workspaceId: string): void {
  if (workspaceId.toLowerCase() !== caller.key.workspaceId) throw workspaceNotFound(workspaceId);
}

export function workspaceNotFound(workspaceId: string) {
  return gatewayError(404, `Workspace ${workspaceId} not found`, { reason: "not_found", retryable: false });
}

/** One row of the caller's organization matching `where`, or a 404 saying `notFound`. */
export async function findInOrganization<M extends Model<{ organizationId: string }>>(
  model: ModelStatic<M>,
  caller: Caller,
  where: WhereOptions<Attributes<M>>,
  notFound: string,
  options: LookupOptions = {},
): Promise<M> {
  const row = await model.findOne({
    // Every such model has organizationId; the spread keeps the caller's filter on top.
    where: { ...where, ...inOrganization(caller) } as WhereOptions<Attributes<M>>,
    transaction: options.transaction,
    ...(options.attributes ? { attributes: options.attributes } : {}),
    ...(options.lock && options.transaction ? { lock: options.transaction.LOCK.UPDATE } : {}),
  });
  if (!row) throw gatewayError(404, notFound);
  return row;
}

/** A workspace of the caller's organization by UUID or slug. */
export function findWorkspace(caller: Caller, ref: string, options: LookupOptions = {}): Promise<WorkspaceRow> {
  const where = UUID_PATTERN.test(ref) ? { id: ref.toLowerCase() } : { slug: ref };
  return findInOrganization(WorkspaceRow, caller, where, `Workspace '${ref}' not found`, options);
}

/**
 * An intern's own key (created at provisioning) acts for that intern alone: the
 * intern it is confined to, or null for every other key.
 */
export function confinedInternOf(caller: Caller): string | null {
  return caller.key.internId ?? null;
}

/**
 * Workspace-wide intern and vault operations (create an intern, workspace secrets, copying from
 * them) do not exist for an intern's own key: 404, like every intern other than its own.
 */
export function requireWorkspaceKey(caller: Caller): void {
  if (confinedInternOf(caller) !== null)
    throw gatewayError(404, "Not found: an intern's own key can reach only that intern", {
      reason: "not_found",
      retryable: false,
    });
}
