import type { Transaction } from "sequelize";
import type { MemberRow } from "../../platform/db/governance-models.js";
import { OrganizationRow, type WorkspaceRow } from "../../platform/db/models.js";
import { createOwner } from "../members/member-store.js";
import { createWorkspaceRow } from "../workspaces/workspace-store.js";

export interface NewOrganization {
  name: string;
  /** Stored entitlement names (`interns`, `private_endpoints`). */
  entitlements: string[];
  ownerEmail: string;
  /** `created_by` of the default workspace. */
  createdBy: string;
}

/**
 * An organization always starts with its owner (the member its keys belong to when minted for no
 * one) and its default workspace, where its keys go unless told otherwise.
 */
export async function createOrganization(
  { name, entitlements, ownerEmail, createdBy }: NewOrganization,
  transaction: Transaction,
): Promise<{ organization: OrganizationRow; workspace: WorkspaceRow; owner: MemberRow }> {
  const organization = await OrganizationRow.create({ name, entitlements }, { transaction });
  const owner = await createOwner(organization.id, ownerEmail, transaction);
  const workspace = await createWorkspaceRow(
    { organizationId: organization.id, name: "Default", slug: "default", createdBy },
    transaction,
  );
  return { organization, workspace, owner };
}
