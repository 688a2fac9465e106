import { OrganizationRow } from "../../server/platform/db/models.js";
import { issueManagementKey } from "../../server/services/keys/key-issuer.js";
import { createOrganization } from "../../server/services/operator/organization-store.js";

/**
 * A second organization with its owner, its own workspace and a management key of the owner,
 * written straight to the database of the running test gateway (creating organizations is an
 * operator task, not an API).
 */
export async function seedOrganization(
  name: string,
  entitlements: string[] = [],
): Promise<{ organizationId: string; workspaceId: string; key: string }> {
  return OrganizationRow.sequelize!.transaction(async (transaction) => {
    const { organization, workspace } = await createOrganization(
      { name, entitlements, ownerEmail: "owner@localhost", createdBy: "test" },
      transaction,
    );
    const scope = { organizationId: organization.id, workspaceId: workspace.id, creatorUserId: null };
    const { secret } = await issueManagementKey(scope, "seeded", transaction);
    return { organizationId: organization.id, workspaceId: workspace.id, key: secret };
  });
}
