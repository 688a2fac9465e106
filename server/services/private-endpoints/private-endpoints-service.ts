import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { Transaction } from "sequelize";
import { DataRegionSchema, DeletedResponseSchema } from "../../../gen/gateway/v1/common_pb.js";
import {
  UpdatePrivateEndpointRequestSchema,
  type PrivateEndpointsService,
} from "../../../gen/gateway/v1/private_endpoints_pb.js";
import { requireByokProvider } from "../../engine/index.js";
import { callerOf, type Caller } from "../../platform/rpc/auth.js";
import { gatewayError } from "../../../wire/errors.js";
import { findInOrganization, findWorkspace, inOrganization } from "../../platform/rpc/scope.js";
import { changedFields } from "../../platform/rpc/update-mask.js";
import { wireName } from "../../../wire/enums.js";
import { PrivateEndpointRow } from "../../platform/db/governance-models.js";
import type { Deps } from "../deps.js";
import { parseBaseUrl } from "../../platform/outbound/base-url.js";
import { createDestinationGuard, DestinationRefused } from "../../../egress/destination-guard.js";
import { patchUpstream } from "./endpoint-update.js";
import { toPrivateEndpoint, toPrivateEndpointSummary } from "./endpoint-view.js";
import { modelIdentity } from "./model-identity.js";
import { loadTrustStore } from "../../platform/outbound/trust-store.js";
import { runValidation } from "./validation-checks.js";

/**
 * Private endpoints (proto/gateway/v1/private_endpoints.proto): create a draft, validate it with a live request
 * through a workspace's BYOK credential (which records `validated_at`), activate it. Any change to
 * a draft clears its validation; an active endpoint is frozen. The entitlement and the management
 * key are checked by the auth interceptor from the proto options.
 */
export function privateEndpointsService({
  config,
  secrets,
  sequelize,
  engine: { catalog },
}: Deps): Partial<ServiceImpl<typeof PrivateEndpointsService>> {
  const guard = createDestinationGuard({
    allowedHosts: config.privateEndpointAllowedHosts,
    resolveTimeoutMs: config.privateEndpointTimeoutMs,
  });
  const ca = loadTrustStore(config.privateEndpointCaFile);

  /** 400 for a malformed base_url, 422 for a destination the gateway will not call. */
  async function vetBaseUrl(raw: string): Promise<void> {
    try {
      await guard.vet(parseBaseUrl(raw));
    } catch (err) {
      if (err instanceof DestinationRefused) throw gatewayError(422, err.message);
      throw err;
    }
  }

  return {
    async createPrivateEndpoint(req, ctx) {
      const caller = callerOf(ctx);
      const model = modelIdentity(catalog, req.modelPermaslug);
      const provider = requireByokProvider(req.providerSlug, "provider_slug");
      if (req.baseUrl === undefined)
        throw gatewayError(400, "base_url is required: no supported provider derives its URL from the BYOK credential");
      await vetBaseUrl(req.baseUrl);
      const row = await PrivateEndpointRow.create({
        ...inOrganization(caller),
        modelPermaslug: model.permaslug,
        modelSlug: model.slug,
        modelName: model.name,
        providerSlug: provider.slug,
        providerName: provider.name,
        upstreamModelId: req.upstreamModelId,
        baseUrl: req.baseUrl,
        declaredRegion: wireName(DataRegionSchema, req.declaredRegion) ?? null,
        declaredZdr: req.declaredZdr ?? false,
        pricingPrompt: req.pricing?.prompt ?? null,
        pricingCompletion: req.pricing?.completion ?? null,
        pricingInputCacheRead: req.pricing?.inputCacheRead ?? null,
        pricingInputCacheWrite: req.pricing?.inputCacheWrite ?? null,
        status: "draft",
      });
      return { data: toPrivateEndpoint(row) };
    },

    async listPrivateEndpoints(_req, ctx) {
      const rows = await PrivateEndpointRow.findAll({
        where: inOrganization(callerOf(ctx)),
        order: [
          ["createdAt", "DESC"],
          ["id", "ASC"],
        ],
      });
      return { data: rows.map(toPrivateEndpointSummary) };
    },

    async getPrivateEndpoint(req, ctx) {
      return { data: toPrivateEndpoint(await findEndpoint(callerOf(ctx), req.id)) };
    },

    async updatePrivateEndpoint(req, ctx) {
      const caller = callerOf(ctx);
      const present = changedFields(UpdatePrivateEndpointRequestSchema, req, ["id"]);
      const current = await findEndpoint(caller, req.id);
      if (current.status === "active") throw activeConflict();
      if (present.has("base_url")) {
        if (req.baseUrl === undefined)
          throw gatewayError(400, "base_url cannot be null; omit it to keep the stored one");
        // The stored URL passed the guard when it was set; validation vets it again before calling.
        if (req.baseUrl === current.baseUrl) parseBaseUrl(req.baseUrl);
        else await vetBaseUrl(req.baseUrl);
      }
      const row = await sequelize.transaction(async (transaction) => {
        const locked = await findEndpoint(caller, req.id, transaction);
        if (locked.status === "active") throw activeConflict();
        const { next, changed } = patchUpstream(locked, req, present);
        if (!changed) return locked;
        // A JS Date (millisecond precision) so validation can compare it exactly (see below).
        return locked.update({ ...next, validatedAt: null, updatedAt: new Date() }, { transaction });
      });
      return { data: toPrivateEndpoint(row) };
    },

    async validatePrivateEndpoint(req, ctx) {
      const caller = callerOf(ctx);
      const endpoint = await findEndpoint(caller, req.id);
      const workspace = await findWorkspace(caller, req.workspaceId);
      if (endpoint.status === "active")
        throw gatewayError(409, "The private endpoint is active; only a draft can be validated");
      const result = await runValidation({
        endpoint,
        workspace,
        masterKey: secrets.masterKey,
        guard,
        timeoutMs: config.privateEndpointTimeoutMs,
        ca,
      });
      // The outcome belongs to the configuration that was tested: a PATCH, activation or deletion
      // while the probe ran (which moves updated_at or the status) leaves the row alone. A failed
      // run withdraws an earlier pass of the same configuration.
      const [recorded] = await PrivateEndpointRow.update(
        { validatedAt: result.passed ? new Date() : null },
        {
          where: {
            id: endpoint.id,
            status: "draft",
            updatedAt: endpoint.updatedAt ?? null,
            upstreamModelId: endpoint.upstreamModelId,
            baseUrl: endpoint.baseUrl ?? null,
          },
        },
      );
      if (result.passed && recorded === 0) {
        throw gatewayError(409, "The private endpoint changed while it was being validated; validate it again");
      }
      return { data: result };
    },

    async activatePrivateEndpoint(req, ctx) {
      const caller = callerOf(ctx);
      const row = await sequelize.transaction(async (transaction) => {
        const locked = await findEndpoint(caller, req.id, transaction);
        if (locked.status === "active") throw gatewayError(409, "The private endpoint is already active");
        if (!locked.validatedAt)
          throw gatewayError(
            409,
            "The private endpoint has not passed validation since it was created or last changed; validate it first",
          );
        return locked.update({ status: "active", updatedAt: new Date() }, { transaction });
      });
      return { data: toPrivateEndpoint(row) };
    },

    async deletePrivateEndpoint(req, ctx) {
      const row = await findEndpoint(callerOf(ctx), req.id);
      await row.destroy();
      return create(DeletedResponseSchema, { deleted: true });
    },
  };
}

/** An endpoint of the caller's organization; with a transaction, locked for update. */
function findEndpoint(caller: Caller, id: string, transaction?: Transaction): Promise<PrivateEndpointRow> {
  return findInOrganization(PrivateEndpointRow, caller, { id: id.toLowerCase() }, "Private endpoint not found", {
    transaction,
    lock: true,
  });
}

function activeConflict() {
  return gatewayError(409, "The private endpoint is active and cannot be updated; delete it and create a new one");
}
