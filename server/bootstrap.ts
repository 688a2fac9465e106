import type { Sequelize } from "sequelize";
import { hashKey, maskKey, newKeySecret } from "./core/key-secret.js";
import { ApiKeyRow, OrganizationRow } from "./db/models.js";
import { createOrganization } from "./operator/organization-store.js";
import { defaultWorkspaceOf } from "./workspaces/workspace-store.js";
import type { Logger } from "./logger.js";

const BOOTSTRAP_LOCK = 727_002;

/**
 * First start: an organization, its default workspace and a management key. With
 * GATEWAY_BOOTSTRAP_KEY that exact secret becomes (idempotently) a management key of the first
 * organization; otherwise a random one is generated and printed once, on stdout, not in the log.
 */
export async function bootstrap(sequelize: Sequelize, bootstrapKey: string | undefined, log: Logger): Promise<void> {
  const printed = await sequelize.transaction(async (transaction) => {
    await sequelize.query("SELECT pg_advisory_xact_lock(:lock)", { replacements: { lock: BOOTSTRAP_LOCK }, transaction });
    let organization = await OrganizationRow.findOne({ order: [["createdAt", "ASC"]], transaction });
    const firstStart = !organization;
    if (!organization) {
      ({ organization } = await createOrganization("Default organization", [], "bootstrap", transaction));
      log.info({ organizationId: organization.id }, "created the default organization and workspace");
    }
    if (!bootstrapKey && !firstStart) return undefined;
    const secret = bootstrapKey ?? newKeySecret();
    const hash = hashKey(secret);
    if (await ApiKeyRow.findByPk(hash, { transaction })) return undefined;
    const workspace = await defaultWorkspaceOf(organization.id, transaction);
    if (!workspace) throw new Error("the first organization has no workspace");
    await ApiKeyRow.create(
      { hash, organizationId: organization.id, workspaceId: workspace.id, name: "Bootstrap management key", label: maskKey(secret), isManagement: true },
      { transaction },
    );
    log.info({ label: maskKey(secret) }, "created the bootstrap management key");
    return bootstrapKey ? undefined : secret;
  });
  if (printed) {
    process.stdout.write(`\nManagement API key (shown once, store it now):\n\n  ${printed}\n\n`);
  }
}
