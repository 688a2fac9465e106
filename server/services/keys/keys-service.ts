import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { DeletedResponseSchema, ResetIntervalSchema } from "../../../gen/gateway/v1/common_pb.js";
import { type KeysService, UpdateKeyRequestSchema } from "../../../gen/gateway/v1/keys_pb.js";
import { callerOf, type Caller } from "../../platform/rpc/auth.js";
import { gatewayError } from "../../../wire/errors.js";
import {
  budgetLayers,
  currentPeriodRefs,
  freeModelRequestsToday,
  keyUsage,
  keysUsage,
  rateLimitColumns,
  readSpend,
  storedUsd,
} from "../../engine/index.js";
import { pageOf } from "../../platform/rpc/pagination.js";
import { findInOrganization, findWorkspace, inOrganization } from "../../platform/rpc/scope.js";
import { requestDate } from "../../platform/rpc/timestamps.js";
import { changedFields } from "../../platform/rpc/update-mask.js";
import { wireName } from "../../../wire/enums.js";
import { ApiKeyRow } from "../../platform/db/models.js";
import type { Deps } from "../deps.js";
import { authCodeHandlers } from "./auth-codes.js";
import { futureDate, issueKey } from "./key-issuer.js";
import { toApiKey, toCurrentKey } from "./key-view.js";

/** GET /key, key management, and the PKCE flow (auth-codes.ts). */
export function keysService(deps: Deps): Partial<ServiceImpl<typeof KeysService>> {
  const { config } = deps;
  return {
    ...authCodeHandlers(deps),

    async getCurrentKey(_req, ctx) {
      const caller = callerOf(ctx);
      const { key, organization } = caller;
      // Usage shown is settled usage; this instance's calls still queued for settlement are written first.
      await deps.engine.settlement.barrier();
      const now = new Date();
      // Independent reads, issued together; the counters of both scopes cover every budget layer.
      const [{ workspace, workspaceBudgets, guardrails }, spend, freeUsed] = await Promise.all([
        deps.engine.governance.governance(caller),
        readSpend(deps.sequelize, [
          ...currentPeriodRefs("key", key.hash, now),
          ...currentPeriodRefs("workspace", key.workspaceId, now),
        ]),
        freeModelRequestsToday(deps.sequelize, key.hash, now),
      ]);
      return {
        data: toCurrentKey({
          key,
          organization,
          layers: budgetLayers(key, guardrails, workspaceBudgets, workspace, now),
          spend,
          guardrails,
          freeModelDailyRequests: { limit: config.freeModelDailyRequests, used: freeUsed },
          now,
        }),
      };
    },

    async createKey(req, ctx) {
      const caller = callerOf(ctx);
      const workspace = req.workspaceId ? await findWorkspace(caller, req.workspaceId) : undefined;
      const { row, secret } = await issueKey({
        ...inOrganization(caller),
        workspaceId: workspace?.id ?? caller.key.workspaceId,
        // A member's key mints keys that belong to that member unless another is named.
        creatorUserId: req.creatorUserId ?? caller.key.creatorUserId ?? null,
        name: req.name,
        isManagement: req.isManagementKey ?? false,
        limitMicros: storedUsd(req.limit, "limit"),
        limitReset: wireName(ResetIntervalSchema, req.limitReset) ?? null,
        includeByokInLimit: req.includeByokInLimit ?? false,
        expiresAt: req.expiresAt ? futureDate(requestDate(req.expiresAt, "expires_at")) : null,
        ...rateLimitColumns(req.svcRateLimit),
      });
      return { data: toApiKey(row), key: secret };
    },

    async listKeys(req, ctx) {
      const caller = callerOf(ctx);
      const { offset, limit } = pageOf(req, 100);
      const rows = await ApiKeyRow.findAll({
        where: { ...inOrganization(caller), ...(req.includeDisabled ? {} : { disabled: false }) },
        order: [
          ["createdAt", "DESC"],
          ["hash", "ASC"],
        ],
        offset,
        limit,
      });
      await deps.engine.settlement.barrier();
      const usage = await keysUsage(
        deps.sequelize,
        rows.map((row) => row.hash),
        new Date(),
      );
      return { data: rows.map((row) => toApiKey(row, usage.get(row.hash))) };
    },

    async getKey(req, ctx) {
      const row = await findKey(callerOf(ctx), req.hash);
      await deps.engine.settlement.barrier();
      return { data: toApiKey(row, await keyUsage(deps.sequelize, row.hash, new Date())) };
    },

    async updateKey(req, ctx) {
      const row = await findKey(callerOf(ctx), req.hash);
      const changed = changedFields(UpdateKeyRequestSchema, req, ["hash"]);
      if (changed.has("name")) {
        if (req.name === undefined) throw gatewayError(400, "name cannot be null");
        row.name = req.name;
      }
      if (changed.has("disabled")) row.disabled = req.disabled ?? false;
      if (changed.has("limit")) row.limitMicros = storedUsd(req.limit, "limit");
      if (changed.has("limit_reset")) row.limitReset = wireName(ResetIntervalSchema, req.limitReset) ?? null;
      if (changed.has("include_byok_in_limit")) row.includeByokInLimit = req.includeByokInLimit ?? false;
      if (changed.has("expires_at"))
        row.expiresAt = req.expiresAt ? futureDate(requestDate(req.expiresAt, "expires_at")) : null;
      if (changed.has("svc_rate_limit")) Object.assign(row, rateLimitColumns(req.svcRateLimit));
      if (changed.size > 0) {
        row.updatedAt = new Date();
        await row.save();
      }
      return { data: toApiKey(row, await keyUsage(deps.sequelize, row.hash, new Date())) };
    },

    async deleteKey(req, ctx) {
      const row = await findKey(callerOf(ctx), req.hash);
      await row.destroy();
      return create(DeletedResponseSchema, { deleted: true });
    },
  };
}

function findKey(caller: Caller, hash: string): Promise<ApiKeyRow> {
  return findInOrganization(ApiKeyRow, caller, { hash }, "API key not found");
}
