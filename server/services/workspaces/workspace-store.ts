import { randomUUID } from "node:crypto";
import {
  ForeignKeyConstraintError,
  Op,
  UniqueConstraintError,
  type CreationAttributes,
  type Sequelize,
  type Transaction,
} from "sequelize";
import type { Caller } from "../../platform/rpc/auth.js";
import { gatewayError } from "../../../wire/errors.js";
import { findWorkspace, inOrganization } from "../../platform/rpc/scope.js";
import { GuardrailRow } from "../../platform/db/governance-models.js";
import { ApiKeyRow, WorkspaceRow } from "../../platform/db/models.js";
import { defaultGuardrailInUse } from "../guardrails/guardrail-store.js";
import { createUnrestrictedGuardrail } from "../guardrails/unrestricted-guardrail.js";
import type { WorkspaceColumns } from "./workspace-fields.js";

/** Writes of workspaces, with the conflicts the database detects turned into the API's answers. */
export async function insertWorkspace(
  sequelize: Sequelize,
  caller: Caller,
  columns: WorkspaceColumns & { name: string; slug: string },
): Promise<WorkspaceRow> {
  return answeringConflicts(columns, () =>
    sequelize.transaction((transaction) =>
      createWorkspaceRow(
        {
          ...columns,
          ...inOrganization(caller),
          // A member's key creates on the member's behalf; keys without a member stand for themselves.
          createdBy: caller.key.creatorUserId ?? caller.key.hash,
        },
        transaction,
      ),
    ),
  );
}

/**
 * The one way a workspace comes into being (POST /workspaces, an organization's first workspace):
 * with the default guardrail it names, or else a new one that restricts nothing. The two rows
 * point at each other; the workspace's foreign key is checked at commit (migration 0016).
 */
export async function createWorkspaceRow(
  attributes: CreationAttributes<WorkspaceRow>,
  transaction: Transaction,
): Promise<WorkspaceRow> {
  if (attributes.defaultGuardrailId) return WorkspaceRow.create(attributes, { transaction });
  const guardrailId = randomUUID();
  const workspace = await WorkspaceRow.create({ ...attributes, defaultGuardrailId: guardrailId }, { transaction });
  await createUnrestrictedGuardrail(guardrailId, workspace, transaction);
  return workspace;
}

export async function applyWorkspaceChanges(workspace: WorkspaceRow, columns: WorkspaceColumns): Promise<WorkspaceRow> {
  return answeringConflicts(columns, () => workspace.update({ ...columns, updatedAt: new Date() }));
}

/**
 * Deleting a workspace would cascade to its keys, so a workspace that still has keys is refused
 * rather than silently revoking them; so is the organization's default (oldest) workspace, where
 * keys land when none is named. Budgets, guardrails, BYOK credentials and pending authorization
 * codes go with the workspace.
 */
export async function removeWorkspace(sequelize: Sequelize, caller: Caller, ref: string): Promise<void> {
  await sequelize
    .transaction(async (transaction) => {
      // The row lock conflicts with the key lock a concurrent key insert takes on its workspace, so
      // no key can appear between the count below and the delete.
      const workspace = await findWorkspace(caller, ref, { transaction, lock: true });
      const oldest = await defaultWorkspaceOf(caller.organization.id, transaction);
      if (oldest?.id === workspace.id)
        throw gatewayError(409, "The organization's default workspace cannot be deleted");
      const keys = await ApiKeyRow.count({ where: { workspaceId: workspace.id }, transaction });
      if (keys > 0) {
        throw gatewayError(409, `Workspace '${ref}' still has ${keys} API key(s); delete them first`);
      }
      const borrower = await workspaceBorrowingGuardrailOf(workspace.id, transaction);
      if (borrower)
        throw defaultGuardrailInUse(
          `Workspace '${ref}' holds the default guardrail of workspace '${borrower.slug}'`,
          borrower,
        );
      await workspace.destroy({ transaction });
    })
    .catch((err: unknown) => {
      // A default set on another workspace after the check above fails the commit instead.
      if (err instanceof ForeignKeyConstraintError)
        throw gatewayError(
          409,
          `Workspace '${ref}' holds another workspace's default guardrail; change that default first`,
        );
      throw err;
    });
}

/** Another workspace whose default guardrail belongs to `workspaceId` (its guardrails go with it). */
async function workspaceBorrowingGuardrailOf(
  workspaceId: string,
  transaction: Transaction,
): Promise<WorkspaceRow | null> {
  const own = await GuardrailRow.findAll({ where: { workspaceId }, attributes: ["id"], transaction });
  if (own.length === 0) return null;
  return WorkspaceRow.findOne({
    where: { defaultGuardrailId: own.map((g) => g.id), id: { [Op.ne]: workspaceId } },
    transaction,
  });
}

/** The organization's default workspace: its oldest, where keys land when none is named. */
export async function defaultWorkspaceOf(
  organizationId: string,
  transaction?: Transaction,
): Promise<WorkspaceRow | null> {
  return WorkspaceRow.findOne({
    where: { organizationId },
    order: [
      ["createdAt", "ASC"],
      ["id", "ASC"],
    ],
    transaction,
  });
}

async function answeringConflicts(
  columns: WorkspaceColumns,
  write: () => Promise<WorkspaceRow>,
): Promise<WorkspaceRow> {
  try {
    return await write();
  } catch (err) {
    // The only unique constraint of a workspace is its slug within the organization.
    if (err instanceof UniqueConstraintError) {
      throw gatewayError(409, `A workspace with slug '${columns.slug ?? ""}' already exists in this organization`);
    }
    // The only foreign key a request can name: a guardrail deleted since it was checked.
    if (err instanceof ForeignKeyConstraintError) {
      throw gatewayError(
        400,
        `default_guardrail_id '${columns.defaultGuardrailId ?? ""}' is not a guardrail of this organization`,
      );
    }
    throw err;
  }
}
