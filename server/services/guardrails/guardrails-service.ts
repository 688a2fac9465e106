import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { ForeignKeyConstraintError } from "sequelize";
import { DeletedResponseSchema } from "../../../gen/gateway/v1/common_pb.js";
import { UpdateGuardrailRequestSchema, type GuardrailsService } from "../../../gen/gateway/v1/guardrails_pb.js";
import { callerOf } from "../../platform/rpc/auth.js";
import { gatewayError } from "../../../wire/errors.js";
import { storedUsd } from "../../engine/index.js";
import { findPage } from "../../platform/rpc/pagination.js";
import { findWorkspace, inOrganization } from "../../platform/rpc/scope.js";
import { changedFields } from "../../platform/rpc/update-mask.js";
import { GuardrailRow } from "../../platform/db/governance-models.js";
import { WorkspaceRow } from "../../platform/db/models.js";
import type { Deps } from "../deps.js";
import { budgetColumns, createdColumns, policyColumns, storedResetInterval } from "./guardrail-columns.js";
import { assignmentHandlers } from "./guardrail-assignments.js";
import { defaultGuardrailInUse, findGuardrail } from "./guardrail-store.js";
import { toGuardrail } from "./guardrail-view.js";

/** Guardrails: policies of a workspace, applied to the keys and members assigned. */
export function guardrailsService(deps: Deps): ServiceImpl<typeof GuardrailsService> {
  return {
    ...assignmentHandlers(deps),

    async createGuardrail(req, ctx) {
      const caller = callerOf(ctx);
      const workspace = await findWorkspace(caller, req.workspaceId ?? caller.key.workspaceId);
      const row = await GuardrailRow.create({
        ...inOrganization(caller),
        workspaceId: workspace.id,
        name: req.name,
        ...createdColumns(req),
        ...budgetColumns(storedUsd(req.limitUsd, "limit_usd"), storedResetInterval(req.resetInterval)),
      });
      return { data: toGuardrail(row) };
    },

    async listGuardrails(req, ctx) {
      const caller = callerOf(ctx);
      const workspace = await findWorkspace(caller, req.workspaceId ?? caller.key.workspaceId);
      const { rows, totalCount } = await findPage(GuardrailRow, req, {
        where: { ...inOrganization(caller), workspaceId: workspace.id },
        order: [
          ["createdAt", "DESC"],
          ["id", "ASC"],
        ],
      });
      return { data: rows.map(toGuardrail), totalCount };
    },

    async getGuardrail(req, ctx) {
      return { data: toGuardrail(await findGuardrail(callerOf(ctx), req.id)) };
    },

    async updateGuardrail(req, ctx) {
      const row = await findGuardrail(callerOf(ctx), req.id);
      const changed = changedFields(UpdateGuardrailRequestSchema, req, ["id"]);
      if (changed.size === 0) return { data: toGuardrail(row) };
      if (changed.has("name") && req.name === undefined) throw gatewayError(400, "name cannot be null");
      const limitMicros = changed.has("limit_usd") ? storedUsd(req.limitUsd, "limit_usd") : row.limitMicros;
      // Removing the limit removes the budget, interval included; naming an interval alongside is a 400.
      const resetInterval = changed.has("reset_interval")
        ? storedResetInterval(req.resetInterval)
        : limitMicros === null
          ? null
          : row.resetInterval;
      await row.update({
        ...(req.name !== undefined && changed.has("name") ? { name: req.name } : {}),
        ...policyColumns(req, changed),
        ...budgetColumns(limitMicros, resetInterval),
        updatedAt: new Date(),
      });
      return { data: toGuardrail(row) };
    },

    async deleteGuardrail(req, ctx) {
      // Assignments go with it (ON DELETE CASCADE). A workspace's default stays: never null.
      const row = await findGuardrail(callerOf(ctx), req.id);
      const holder = await WorkspaceRow.findOne({ where: { defaultGuardrailId: row.id } });
      if (holder)
        throw defaultGuardrailInUse(
          `Guardrail ${row.id} is the default guardrail of workspace '${holder.slug}'`,
          holder,
        );
      try {
        await row.destroy();
      } catch (err) {
        // Made a default after the check above: the deferred foreign key refuses the delete.
        if (err instanceof ForeignKeyConstraintError)
          throw gatewayError(409, `Guardrail ${row.id} became a workspace's default guardrail meanwhile`);
        throw err;
      }
      return create(DeletedResponseSchema, { deleted: true });
    },
  };
}
