import { hashKey, maskKey, newKeySecret } from "../../server/core/key-secret.js";
import { ApiKeyRow, OrganizationRow } from "../../server/db/models.js";
import { createOrganization } from "../../server/operator/organization-store.js";

/**
 * A second organization with its own workspace and management key, written straight to the
 * database of the running test gateway (creating organizations is an operator task, not an API).
 */
export async function seedOrganization(name: string, entitlements: string[] = []): Promise<{ organizationId: string; workspaceId: string; key: string }> {
  const { organization, workspace } = await OrganizationRow.sequelize!.transaction((transaction) => createOrganization(name, entitlements, "test", transaction));
  const key = newKeySecret();
  await ApiKeyRow.create({ hash: hashKey(key), organizationId: organization.id, workspaceId: workspace.id, name: "seeded", label: maskKey(key), isManagement: true });
  return { organizationId: organization.id, workspaceId: workspace.id, key };
}
