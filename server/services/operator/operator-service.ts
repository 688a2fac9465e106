import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { Transaction } from "sequelize";
import { DeletedResponseSchema, ResetIntervalSchema } from "../../../gen/gateway/v1/common_pb.js";
import { OrganizationSchema, type Organization, type OperatorService } from "../../../gen/gateway/v1/operator_pb.js";
import { Entitlement } from "../../../gen/gateway/v1/options_pb.js";
import { ENTITLEMENT_NAMES } from "../../platform/rpc/auth.js";
import { gatewayError } from "../../../wire/errors.js";
import { storedUsd } from "../../engine/index.js";
import { requestDate } from "../../platform/rpc/timestamps.js";
import { wireName } from "../../../wire/enums.js";
import { OrganizationRow, WorkspaceRow } from "../../platform/db/models.js";
import type { Deps } from "../deps.js";
import { futureDate, issueKey, issueManagementKey } from "../keys/key-issuer.js";
import { toApiKey } from "../keys/key-view.js";
import { createMember, listMembers, removeMember } from "../members/member-store.js";
import { newMemberOf, toMember } from "../members/member-view.js";
import { defaultWorkspaceOf } from "../workspaces/workspace-store.js";
import { createOrganization } from "./organization-store.js";

/**
 * What only the operator may do (`npm run admin`): create organizations, grant entitlements, and
 * manage members and keys of any organization, so every state the API distinguishes (inside or
 * outside the interns programme, with or without private endpoints, a key whose creator left) can
 * be reached on a fresh install.
 */
export function operatorService({ sequelize, config }: Deps): ServiceImpl<typeof OperatorService> {
  return {
    async createOrganization(req) {
      return sequelize.transaction(async (transaction) => {
        const { organization, workspace, owner } = await createOrganization(
          {
            name: req.name,
            entitlements: entitlementNames(req.entitlements),
            ownerEmail: req.ownerEmail ?? config.ownerEmail,
            createdBy: "operator",
          },
          transaction,
        );
        const scope = { organizationId: organization.id, workspaceId: workspace.id, creatorUserId: owner.id };
        const { secret } = await issueManagementKey(scope, "Operator-issued management key", transaction);
        return { data: toOrganization(organization, workspace), key: secret };
      });
    },

    async listOrganizations() {
      const order: [string, string][] = [
        ["createdAt", "ASC"],
        ["id", "ASC"],
      ];
      const [organizations, workspaces] = await Promise.all([
        OrganizationRow.findAll({ order }),
        WorkspaceRow.findAll({ order }),
      ]);
      // Two queries instead of one per organization: the first workspace seen is the oldest.
      const defaults = new Map<string, WorkspaceRow>();
      for (const workspace of workspaces)
        if (!defaults.has(workspace.organizationId)) defaults.set(workspace.organizationId, workspace);
      return { data: organizations.map((o) => toOrganization(o, defaults.get(o.id) ?? null)) };
    },

    async setEntitlement(req) {
      const name = ENTITLEMENT_NAMES[req.entitlement];
      if (!name) throw gatewayError(400, "entitlement must be ENTITLEMENT_INTERNS or ENTITLEMENT_PRIVATE_ENDPOINTS");
      const organization = await sequelize.transaction(async (transaction) => {
        const row = await findOrganization(req.organizationId, transaction);
        const others = row.entitlements.filter((e) => e !== name);
        row.entitlements = req.enabled ? [...others, name] : others;
        row.updatedAt = new Date();
        return row.save({ transaction });
      });
      return { data: toOrganization(organization, await defaultWorkspaceOf(organization.id)) };
    },

    async createMember(req) {
      const organization = await findOrganization(req.organizationId);
      return { data: toMember(await createMember(organization.id, newMemberOf(req.member!))) };
    },

    async listMembers(req) {
      const organization = await findOrganization(req.organizationId);
      const { rows, totalCount } = await listMembers(organization.id, { offset: 0, limit: 10_000 });
      return { data: rows.map(toMember), totalCount };
    },

    async deleteMember(req) {
      const organization = await findOrganization(req.organizationId);
      await removeMember(organization.id, req.userId);
      return create(DeletedResponseSchema, { deleted: true });
    },

    async createKey(req) {
      const organization = await findOrganization(req.organizationId);
      const key = req.key!;
      const workspace = key.workspaceId
        ? await WorkspaceRow.findOne({ where: { organizationId: organization.id, id: key.workspaceId.toLowerCase() } })
        : await defaultWorkspaceOf(organization.id);
      if (!workspace)
        throw gatewayError(
          404,
          `Workspace '${key.workspaceId ?? "default"}' not found in organization ${organization.id}`,
        );
      const { row, secret } = await issueKey({
        organizationId: organization.id,
        workspaceId: workspace.id,
        creatorUserId: key.creatorUserId ?? null,
        name: key.name,
        isManagement: key.isManagementKey ?? false,
        limitMicros: storedUsd(key.limit, "limit"),
        limitReset: wireName(ResetIntervalSchema, key.limitReset) ?? null,
        includeByokInLimit: key.includeByokInLimit ?? false,
        expiresAt: key.expiresAt ? futureDate(requestDate(key.expiresAt, "expires_at")) : null,
      });
      return { data: toApiKey(row), key: secret };
    },
  };
}

async function findOrganization(id: string, transaction?: Transaction): Promise<OrganizationRow> {
  const organization = await OrganizationRow.findByPk(id.toLowerCase(), {
    transaction,
    ...(transaction ? { lock: transaction.LOCK.UPDATE } : {}),
  });
  if (!organization) throw gatewayError(404, `Organization '${id}' not found`);
  return organization;
}

function entitlementNames(entitlements: Entitlement[]): string[] {
  const names = new Set<string>();
  for (const entitlement of entitlements) {
    const name = ENTITLEMENT_NAMES[entitlement];
    if (!name)
      throw gatewayError(400, "entitlements may hold ENTITLEMENT_INTERNS and ENTITLEMENT_PRIVATE_ENDPOINTS only");
    names.add(name);
  }
  return [...names];
}

function toOrganization(row: OrganizationRow, workspace: WorkspaceRow | null): Organization {
  const byName = new Map(
    Object.entries(ENTITLEMENT_NAMES).map(([number, name]) => [name, Number(number) as Entitlement]),
  );
  return create(OrganizationSchema, {
    id: row.id,
    name: row.name,
    entitlements: row.entitlements.map((name) => byName.get(name) ?? Entitlement.UNSPECIFIED),
    createdAt: timestampFromDate(row.createdAt),
    defaultWorkspaceId: workspace?.id ?? "",
  });
}
