import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { DeletedResponseSchema, ResetIntervalSchema } from "../../gen/gateway/v1/common_pb.js";
import { KeysService, UpdateKeyRequestSchema } from "../../gen/gateway/v1/keys_pb.js";
import { callerOf, type Caller } from "../core/auth.js";
import { gatewayError } from "../core/errors.js";
import { hashKey, maskKey, newKeySecret } from "../core/key-secret.js";
import { usdToMicros } from "../core/money.js";
import { pageOf } from "../core/pagination.js";
import { findWorkspace, inOrganization } from "../core/scope.js";
import { changedFields } from "../core/update-mask.js";
import { wireName } from "../core/wire-enums.js";
import { ApiKeyRow, WorkspaceBudgetRow, WorkspaceRow } from "../db/models.js";
import type { Deps } from "../deps.js";
import { toApiKey, toCurrentKey } from "./key-view.js";

/** GET /key and key management. The PKCE flow (CreateAuthCode, ExchangeAuthCode) comes with governance. */
export function keysService({ config }: Deps): Partial<ServiceImpl<typeof KeysService>> {
  return {
    async getCurrentKey(_req, ctx) {
      const { key, organization } = callerOf(ctx);
      const workspace = await WorkspaceRow.findByPk(key.workspaceId);
      if (!workspace) throw gatewayError(401, "Invalid API key");
      const workspaceBudgets = await WorkspaceBudgetRow.findAll({ where: { workspaceId: workspace.id }, order: [["limitMicros", "ASC"]] });
      return {
        data: toCurrentKey({ key, organization, workspace, workspaceBudgets, freeModelDailyRequests: config.freeModelDailyRequests, now: new Date() }),
      };
    },

    async createKey(req, ctx) {
      const caller = callerOf(ctx);
      const workspace = req.workspaceId ? await findWorkspace(caller, req.workspaceId) : undefined;
      const expiresAt = req.expiresAt ? futureDate(timestampDate(req.expiresAt)) : null;
      const secret = newKeySecret();
      const row = await ApiKeyRow.create({
        hash: hashKey(secret),
        ...inOrganization(caller),
        workspaceId: workspace?.id ?? caller.key.workspaceId,
        creatorUserId: req.creatorUserId ?? null,
        name: req.name,
        label: maskKey(secret),
        isManagement: req.isManagementKey ?? false,
        limitMicros: storedLimit(req.limit),
        limitReset: wireName(ResetIntervalSchema, req.limitReset) ?? null,
        includeByokInLimit: req.includeByokInLimit ?? false,
        expiresAt,
      });
      return { data: toApiKey(row), key: secret };
    },

    async listKeys(req, ctx) {
      const caller = callerOf(ctx);
      const { offset, limit } = pageOf(req, 100);
      const rows = await ApiKeyRow.findAll({
        where: { ...inOrganization(caller), ...(req.includeDisabled ? {} : { disabled: false }) },
        order: [["createdAt", "DESC"], ["hash", "ASC"]],
        offset,
        limit,
      });
      return { data: rows.map(toApiKey) };
    },

    async getKey(req, ctx) {
      return { data: toApiKey(await findKey(callerOf(ctx), req.hash)) };
    },

    async updateKey(req, ctx) {
      const row = await findKey(callerOf(ctx), req.hash);
      const changed = changedFields(UpdateKeyRequestSchema, req, ["hash"]);
      if (changed.has("name")) {
        if (req.name === undefined) throw gatewayError(400, "name cannot be null");
        row.name = req.name;
      }
      if (changed.has("disabled")) row.disabled = req.disabled ?? false;
      if (changed.has("limit")) row.limitMicros = storedLimit(req.limit);
      if (changed.has("limit_reset")) row.limitReset = wireName(ResetIntervalSchema, req.limitReset) ?? null;
      if (changed.has("include_byok_in_limit")) row.includeByokInLimit = req.includeByokInLimit ?? false;
      if (changed.has("expires_at")) row.expiresAt = req.expiresAt ? futureDate(timestampDate(req.expiresAt)) : null;
      if (changed.size > 0) {
        row.updatedAt = new Date();
        await row.save();
      }
      return { data: toApiKey(row) };
    },

    async deleteKey(req, ctx) {
      const row = await findKey(callerOf(ctx), req.hash);
      await row.destroy();
      return create(DeletedResponseSchema, { deleted: true });
    },
  };
}

async function findKey(caller: Caller, hash: string): Promise<ApiKeyRow> {
  const row = await ApiKeyRow.findOne({ where: { ...inOrganization(caller), hash } });
  if (!row) throw gatewayError(404, "API key not found");
  return row;
}

/** An optional USD credit limit as its BIGINT micro-dollar column; none is null. */
function storedLimit(usd: number | undefined): string | null {
  return usd === undefined ? null : usdToMicros(usd).toString();
}

function futureDate(date: Date): Date {
  if (date.getTime() <= Date.now()) throw gatewayError(400, "expires_at must lie in the future");
  return date;
}
