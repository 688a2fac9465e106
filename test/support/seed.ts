import { hashKey, maskKey, newKeySecret } from "../../server/core/key-secret.js";
import { ApiKeyRow, OrganizationRow, WorkspaceRow } from "../../server/db/models.js";

/**
 * A second organization with its own workspace and management key, written straight to the
 * database of the running test gateway (creating organizations is an operator task, not an API).
 */
export async function seedOrganization(name: string, entitlements: string[] = []): Promise<{ organizationId: string; workspaceId: string; key: string }> {
  const organization = await OrganizationRow.create({ name, entitlements });
  const workspace = await WorkspaceRow.create({ organizationId: organization.id, name: `${name} default`, slug: "default", createdBy: "test" });
  const key = newKeySecret();
  await ApiKeyRow.create({ hash: hashKey(key), organizationId: organization.id, workspaceId: workspace.id, name: "seeded", label: maskKey(key), isManagement: true });
  return { organizationId: organization.id, workspaceId: workspace.id, key };
}
