import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { BudgetIntervalSchema, DeletedResponseSchema } from "../../../gen/gateway/v1/common_pb.js";
import { UpdateWorkspaceRequestSchema, type WorkspacesService } from "../../../gen/gateway/v1/workspaces_pb.js";
import { callerOf } from "../../platform/rpc/auth.js";
import { gatewayError } from "../../../wire/errors.js";
import { assertBudgetOrder, byWidth, storedUsd } from "../../engine/index.js";
import { findPage } from "../../platform/rpc/pagination.js";
import { findWorkspace, inOrganization } from "../../platform/rpc/scope.js";
import { changedFields } from "../../platform/rpc/update-mask.js";
import { wireName } from "../../../wire/enums.js";
import { WorkspaceBudgetRow, WorkspaceRow } from "../../platform/db/models.js";
import type { Deps } from "../deps.js";
import { createdWorkspaceFields, workspaceColumns } from "./workspace-fields.js";
import { applyWorkspaceChanges, insertWorkspace, removeWorkspace } from "./workspace-store.js";
import { toWorkspace, toWorkspaceBudget } from "./workspace-view.js";

/** Workspaces of the caller's organization (by UUID or slug) and their budgets; management keys only. */
export function workspacesService({ sequelize }: Deps): ServiceImpl<typeof WorkspacesService> {
  return {
    async createWorkspace(req, ctx) {
      const caller = callerOf(ctx);
      const columns = await workspaceColumns(req, createdWorkspaceFields(req), caller.organization.id);
      return {
        data: toWorkspace(await insertWorkspace(sequelize, caller, { ...columns, name: req.name, slug: req.slug })),
      };
    },

    async listWorkspaces(req, ctx) {
      const { rows, totalCount } = await findPage(WorkspaceRow, req, {
        where: inOrganization(callerOf(ctx)),
        order: [
          ["createdAt", "ASC"],
          ["id", "ASC"],
        ],
      });
      return { data: rows.map(toWorkspace), totalCount };
    },

    async getWorkspace(req, ctx) {
      return { data: toWorkspace(await findWorkspace(callerOf(ctx), req.workspaceRef)) };
    },

    async updateWorkspace(req, ctx) {
      const caller = callerOf(ctx);
      const workspace = await findWorkspace(caller, req.workspaceRef);
      const changed = changedFields(UpdateWorkspaceRequestSchema, req, ["workspace_ref"]);
      if (changed.size === 0) return { data: toWorkspace(workspace) };
      const columns = await workspaceColumns(req, changed, caller.organization.id);
      return { data: toWorkspace(await applyWorkspaceChanges(workspace, columns)) };
    },

    async deleteWorkspace(req, ctx) {
      await removeWorkspace(sequelize, callerOf(ctx), req.workspaceRef);
      return create(DeletedResponseSchema, { deleted: true });
    },

    async listWorkspaceBudgets(req, ctx) {
      const workspace = await findWorkspace(callerOf(ctx), req.workspaceRef);
      const rows = await WorkspaceBudgetRow.findAll({ where: { workspaceId: workspace.id } });
      return { data: rows.sort(byWidth).map(toWorkspaceBudget) };
    },

    async getWorkspaceBudget(req, ctx) {
      const workspace = await findWorkspace(callerOf(ctx), req.workspaceRef);
      const interval = wireName(BudgetIntervalSchema, req.interval)!;
      const row = await WorkspaceBudgetRow.findOne({ where: { workspaceId: workspace.id, interval } });
      if (!row) throw gatewayError(404, `Workspace '${req.workspaceRef}' has no ${interval} budget`);
      return { data: toWorkspaceBudget(row) };
    },

    async putWorkspaceBudget(req, ctx) {
      const caller = callerOf(ctx);
      const interval = wireName(BudgetIntervalSchema, req.interval)!;
      const limitMicros = BigInt(storedUsd(req.limitUsd ?? 0, "limit_usd") ?? 0);
      if (limitMicros <= 0n) throw gatewayError(400, "limit_usd must be at least 0.000001");
      const row = await sequelize.transaction(async (transaction) => {
        // Locking the workspace serialises concurrent budget writes, so the order rule holds.
        const workspace = await findWorkspace(caller, req.workspaceRef, { transaction, lock: true });
        const existing = await WorkspaceBudgetRow.findAll({ where: { workspaceId: workspace.id }, transaction });
        assertBudgetOrder(interval, limitMicros, existing);
        if (req.includeByokInBudgets !== undefined && req.includeByokInBudgets !== workspace.includeByokInBudgets) {
          await workspace.update(
            { includeByokInBudgets: req.includeByokInBudgets, updatedAt: new Date() },
            { transaction },
          );
        }
        const current = existing.find((b) => b.interval === interval);
        if (current) {
          return current.update({ limitMicros: limitMicros.toString(), updatedAt: new Date() }, { transaction });
        }
        return WorkspaceBudgetRow.create(
          { workspaceId: workspace.id, interval, limitMicros: limitMicros.toString() },
          { transaction },
        );
      });
      return { data: toWorkspaceBudget(row) };
    },

    async deleteWorkspaceBudget(req, ctx) {
      const workspace = await findWorkspace(callerOf(ctx), req.workspaceRef);
      await WorkspaceBudgetRow.destroy({
        where: { workspaceId: workspace.id, interval: wireName(BudgetIntervalSchema, req.interval)! },
      });
      return create(DeletedResponseSchema, { deleted: true });
    },
  };
}
