import type { Sequelize } from "sequelize";
import type { GatewayConfig } from "../platform/config.js";
import { hashKey, maskKey } from "../platform/secrets/key-secret.js";
import { ApiKeyRow, OrganizationRow } from "../platform/db/models.js";
import { holdStartUpLock } from "../platform/db/start-up-locks.js";
import { issueManagementKey } from "../services/keys/key-issuer.js";
import { ownerOf } from "../services/members/member-store.js";
import { createOrganization } from "../services/operator/organization-store.js";
import { defaultWorkspaceOf } from "../services/workspaces/workspace-store.js";
import { writeToLogOutput, type Logger } from "../platform/logger.js";

export type BootstrapConfig = Pick<GatewayConfig, "bootstrapKey" | "bootstrapEntitlements" | "ownerEmail">;

/**
 * First start: an organization with its owner member (GATEWAY_OWNER_EMAIL), its default workspace,
 * the entitlements of GATEWAY_BOOTSTRAP_ENTITLEMENTS (whoever runs a self-hosted gateway owns its
 * first organization, so the whole API answers without operator steps) and a management key that
 * belongs to the owner. Later starts change no entitlement: the operator grants and revokes them.
 * With GATEWAY_BOOTSTRAP_KEY that exact secret becomes (idempotently) a management key of the first
 * organization; otherwise a random one is generated and returned, for the start to show
 * (`showBootstrapKey`) once the listeners are bound, next to the addresses it is used at, or before
 * it exits should the start fail later on: the key is stored only as a hash, so this is the one
 * chance to see it. It never reaches the log.
 */
export async function bootstrap(
  sequelize: Sequelize,
  config: BootstrapConfig,
  log: Logger,
): Promise<string | undefined> {
  const { bootstrapKey } = config;
  const printed = await sequelize.transaction(async (transaction) => {
    await holdStartUpLock(sequelize, "bootstrap", transaction);
    let organization = await OrganizationRow.findOne({ order: [["createdAt", "ASC"]], transaction });
    const firstStart = !organization;
    if (!organization) {
      ({ organization } = await createOrganization(
        {
          name: "Default organization",
          entitlements: config.bootstrapEntitlements,
          ownerEmail: config.ownerEmail,
          createdBy: "bootstrap",
        },
        transaction,
      ));
      log.info(
        { organizationId: organization.id, entitlements: config.bootstrapEntitlements },
        "created the default organization, its owner and workspace",
      );
    }
    if (!bootstrapKey && !firstStart) return undefined;
    if (bootstrapKey && (await ApiKeyRow.findByPk(hashKey(bootstrapKey), { transaction }))) return undefined;
    const workspace = await defaultWorkspaceOf(organization.id, transaction);
    if (!workspace) throw new Error("the first organization has no workspace");
    const scope = {
      organizationId: organization.id,
      workspaceId: workspace.id,
      creatorUserId: await ownerOf(organization.id, transaction),
    };
    const { secret } = await issueManagementKey(scope, "Bootstrap management key", transaction, bootstrapKey);
    log.info({ label: maskKey(secret) }, "created the bootstrap management key");
    return bootstrapKey ? undefined : secret;
  });
  return printed;
}

/** The generated bootstrap key, beside the log and not in it: shown once, on the first start. */
export function showBootstrapKey(secret: string, log: Logger): void {
  writeToLogOutput(log, `\nManagement API key (shown once, store it now):\n\n  ${secret}\n\n`);
}
