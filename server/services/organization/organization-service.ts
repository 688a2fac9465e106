import type { ServiceImpl } from "@connectrpc/connect";
import {
  type OrganizationService,
  UpdateOrganizationSettingsRequestSchema,
} from "../../../gen/gateway/v1/organization_pb.js";
import { callerOf } from "../../platform/rpc/auth.js";
import { gatewayError } from "../../../wire/errors.js";
import { changedFields } from "../../platform/rpc/update-mask.js";
import { OrganizationRow } from "../../platform/db/models.js";

/** Settings of the caller's own organization; there is no way to address another one. */
export function organizationService(): Partial<ServiceImpl<typeof OrganizationService>> {
  return {
    async getOrganizationSettings(_req, ctx) {
      return { data: settingsOf(await currentOrganization(callerOf(ctx).organization.id)) };
    },

    async updateOrganizationSettings(req, ctx) {
      const organization = await currentOrganization(callerOf(ctx).organization.id);
      const changed = changedFields(UpdateOrganizationSettingsRequestSchema, req, []);
      if (changed.has("is_filtered_model_catalog_enabled")) {
        if (req.isFilteredModelCatalogEnabled === undefined)
          throw gatewayError(400, "is_filtered_model_catalog_enabled cannot be null");
        organization.isFilteredModelCatalogEnabled = req.isFilteredModelCatalogEnabled;
        organization.updatedAt = new Date();
        await organization.save();
      }
      return { data: settingsOf(organization) };
    },
  };
}

async function currentOrganization(id: string): Promise<OrganizationRow> {
  const organization = await OrganizationRow.findByPk(id);
  if (!organization) throw gatewayError(404, "Organization not found");
  return organization;
}

function settingsOf(organization: OrganizationRow) {
  return { id: organization.id, isFilteredModelCatalogEnabled: organization.isFilteredModelCatalogEnabled };
}
