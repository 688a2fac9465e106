import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { UniqueConstraintError } from "sequelize";
import { BudgetIntervalSchema, DeletedResponseSchema } from "../../gen/gateway/v1/common_pb.js";
import { ProviderSortSchema, ServerToolSchema, WorkspacesService } from "../../gen/gateway/v1/workspaces_pb.js";
import { callerOf } from "../core/auth.js";
import { gatewayError } from "../core/errors.js";
import { usdToMicros } from "../core/money.js";
import { findWorkspace, inOrganization } from "../core/scope.js";
import { wireName } from "../core/wire-enums.js";
import { WorkspaceBudgetRow, WorkspaceRow } from "../db/models.js";
import type { Deps } from "../deps.js";
import { assertBudgetOrder } from "./budget-order.js";
import { toWorkspace, toWorkspaceBudget } from "./workspace-view.js";

/** Workspace creation and budgets. Get, list, update and delete come with the governance issue. */
export function workspacesService({ sequelize }: Deps): Partial<ServiceImpl<typeof WorkspacesService>> {
  return {
    async createWorkspace(req, ctx) {
      const caller = callerOf(ctx);
      try {
        const row = await WorkspaceRow.create({
          ...inOrganization(caller),
          name: req.name,
          slug: req.slug,
          description: req.description ?? null,
          createdBy: caller.key.creatorUserId ?? caller.key.hash,
          defaultGuardrailId: req.defaultGuardrailId?.toLowerCase() ?? null,
          defaultImageModel: req.defaultImageModel ?? null,
          defaultTextModel: req.defaultTextModel ?? null,
          defaultProviderSort: wireName(ProviderSortSchema, req.defaultProviderSort) ?? null,
          // An empty list and null both mean "none disabled"; stored as null.
          disabledServerTools: storedList([...new Set(req.disabledServerTools)].map((tool) => wireName(ServerToolSchema, tool) ?? "")),
          ioLoggingApiKeyIds: storedList(req.ioLoggingApiKeyIds),
          ioLoggingSamplingRate: String(req.ioLoggingSamplingRate ?? 1),
          isDataDiscountLoggingEnabled: req.isDataDiscountLoggingEnabled ?? false,
          isObservabilityBroadcastEnabled: req.isObservabilityBroadcastEnabled ?? false,
          isObservabilityIoLoggingEnabled: req.isObservabilityIoLoggingEnabled ?? false,
          includeByokInBudgets: req.includeByokInBudgets ?? false,
        });
        return { data: toWorkspace(row) };
      } catch (err) {
        if (err instanceof UniqueConstraintError) {
          throw gatewayError(409, `A workspace with slug '${req.slug}' already exists in this organization`);
        }
        throw err;
      }
    },

    async putWorkspaceBudget(req, ctx) {
      const caller = callerOf(ctx);
      const interval = wireName(BudgetIntervalSchema, req.interval)!;
      const limitMicros = usdToMicros(req.limitUsd ?? 0);
      if (limitMicros <= 0n) throw gatewayError(400, "limit_usd must be at least 0.000001");
      const row = await sequelize.transaction(async (transaction) => {
        // Locking the workspace serialises concurrent budget writes, so the order rule holds.
        const workspace = await findWorkspace(caller, req.workspaceRef, { transaction, lock: true });
        const existing = await WorkspaceBudgetRow.findAll({ where: { workspaceId: workspace.id }, transaction });
        assertBudgetOrder(interval, limitMicros, existing);
        if (req.includeByokInBudgets !== undefined && req.includeByokInBudgets !== workspace.includeByokInBudgets) {
          await workspace.update({ includeByokInBudgets: req.includeByokInBudgets, updatedAt: new Date() }, { transaction });
        }
        const current = existing.find((b) => b.interval === interval);
        if (current) {
          return current.update({ limitMicros: limitMicros.toString(), updatedAt: new Date() }, { transaction });
        }
        return WorkspaceBudgetRow.create({ workspaceId: workspace.id, interval, limitMicros: limitMicros.toString() }, { transaction });
      });
      return { data: toWorkspaceBudget(row) };
    },

    async deleteWorkspaceBudget(req, ctx) {
      const workspace = await findWorkspace(callerOf(ctx), req.workspaceRef);
      await WorkspaceBudgetRow.destroy({ where: { workspaceId: workspace.id, interval: wireName(BudgetIntervalSchema, req.interval)! } });
      return create(DeletedResponseSchema, { deleted: true });
    },
  };
}

function storedList(values: string[]): string[] | null {
  return values.length === 0 ? null : values;
}
