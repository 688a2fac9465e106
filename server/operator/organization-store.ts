import type { Transaction } from "sequelize";
import { OrganizationRow, type WorkspaceRow } from "../db/models.js";
import { createWorkspaceRow } from "../workspaces/workspace-store.js";

/** An organization always starts with its default workspace, where its keys go unless told otherwise. */
export async function createOrganization(
  name: string,
  entitlements: string[],
  createdBy: string,
  transaction: Transaction,
): Promise<{ organization: OrganizationRow; workspace: WorkspaceRow }> {
  const organization = await OrganizationRow.create({ name, entitlements }, { transaction });
  const workspace = await createWorkspaceRow({ organizationId: organization.id, name: "Default", slug: "default", createdBy }, transaction);
  return { organization, workspace };
}
