import type { ServiceImpl } from "@connectrpc/connect";
import type { GuardrailsService } from "../../../gen/gateway/v1/guardrails_pb.js";
import { callerOf } from "../../platform/rpc/auth.js";
import { findPage } from "../../platform/rpc/pagination.js";
import { GuardrailKeyAssignmentRow, GuardrailMemberAssignmentRow } from "../../platform/db/governance-models.js";
import { ApiKeyRow } from "../../platform/db/models.js";
import type { Deps } from "../deps.js";
import { distinct, findGuardrail, requireMembers, requireOrganizationKeys } from "./guardrail-store.js";
import { toKeyAssignment, toMemberAssignment } from "./guardrail-view.js";

type AssignmentMethods =
  | "assignGuardrailKeys"
  | "listGuardrailKeyAssignments"
  | "unassignGuardrailKeys"
  | "assignGuardrailMembers"
  | "listGuardrailMemberAssignments"
  | "unassignGuardrailMembers";

const NEWEST_FIRST: Array<[string, string]> = [
  ["createdAt", "DESC"],
  ["id", "ASC"],
];

/**
 * Key and member assignments of a guardrail. Each change runs in one transaction that locks the
 * guardrail row: concurrent requests on the same guardrail queue up, so "newly assigned" counts are
 * exact, and a request naming one unknown key or member changes nothing.
 */
export function assignmentHandlers({
  sequelize,
}: Deps): Pick<ServiceImpl<typeof GuardrailsService>, AssignmentMethods> {
  return {
    async assignGuardrailKeys(req, ctx) {
      const caller = callerOf(ctx);
      const hashes = distinct(req.keyHashes);
      // A member's key records the member; a key without one (bootstrap, operator) records itself.
      const assignedBy = caller.key.creatorUserId ?? caller.key.hash;
      const assignedCount = await sequelize.transaction(async (transaction) => {
        const guardrail = await findGuardrail(caller, req.id, { transaction, lock: true });
        await requireOrganizationKeys(caller, hashes, transaction);
        const existing = await GuardrailKeyAssignmentRow.findAll({
          attributes: ["keyHash"],
          where: { guardrailId: guardrail.id, keyHash: hashes },
          transaction,
        });
        const assigned = new Set(existing.map((row) => row.keyHash));
        const fresh = hashes.filter((hash) => !assigned.has(hash));
        await GuardrailKeyAssignmentRow.bulkCreate(
          fresh.map((keyHash) => ({ guardrailId: guardrail.id, keyHash, assignedBy })),
          { transaction },
        );
        return fresh.length;
      });
      return { assignedCount };
    },

    async listGuardrailKeyAssignments(req, ctx) {
      const guardrail = await findGuardrail(callerOf(ctx), req.id);
      const { rows, totalCount } = await findPage(GuardrailKeyAssignmentRow, req, {
        where: { guardrailId: guardrail.id },
        order: NEWEST_FIRST,
      });
      const keys = await ApiKeyRow.findAll({
        attributes: ["hash", "label", "name"],
        where: { hash: rows.map((row) => row.keyHash) },
      });
      const byHash = new Map(keys.map((key) => [key.hash, key]));
      // A key deleted between the two reads took its assignment with it (cascade): skip it.
      const data = rows.flatMap((row) => {
        const key = byHash.get(row.keyHash);
        return key ? [toKeyAssignment(row, key)] : [];
      });
      return { data, totalCount };
    },

    async unassignGuardrailKeys(req, ctx) {
      const caller = callerOf(ctx);
      const hashes = distinct(req.keyHashes);
      const unassignedCount = await sequelize.transaction(async (transaction) => {
        const guardrail = await findGuardrail(caller, req.id, { transaction, lock: true });
        await requireOrganizationKeys(caller, hashes, transaction);
        return GuardrailKeyAssignmentRow.destroy({
          where: { guardrailId: guardrail.id, keyHash: hashes },
          transaction,
        });
      });
      return { unassignedCount };
    },

    async assignGuardrailMembers(req, ctx) {
      const caller = callerOf(ctx);
      const userIds = distinct(req.memberUserIds);
      const assignedBy = caller.key.creatorUserId ?? null;
      const assignedCount = await sequelize.transaction(async (transaction) => {
        const guardrail = await findGuardrail(caller, req.id, { transaction, lock: true });
        await requireMembers(caller, userIds, transaction);
        const existing = await GuardrailMemberAssignmentRow.findAll({
          attributes: ["userId"],
          where: { guardrailId: guardrail.id, userId: userIds },
          transaction,
        });
        const assigned = new Set(existing.map((row) => row.userId));
        const fresh = userIds.filter((userId) => !assigned.has(userId));
        await GuardrailMemberAssignmentRow.bulkCreate(
          fresh.map((userId) => ({ guardrailId: guardrail.id, userId, assignedBy })),
          { transaction },
        );
        return fresh.length;
      });
      return { assignedCount };
    },

    async listGuardrailMemberAssignments(req, ctx) {
      const caller = callerOf(ctx);
      const guardrail = await findGuardrail(caller, req.id);
      const { rows, totalCount } = await findPage(GuardrailMemberAssignmentRow, req, {
        where: { guardrailId: guardrail.id },
        order: NEWEST_FIRST,
      });
      return { data: rows.map((row) => toMemberAssignment(row, caller.organization.id)), totalCount };
    },

    async unassignGuardrailMembers(req, ctx) {
      const caller = callerOf(ctx);
      const userIds = distinct(req.memberUserIds);
      const unassignedCount = await sequelize.transaction(async (transaction) => {
        const guardrail = await findGuardrail(caller, req.id, { transaction, lock: true });
        await requireMembers(caller, userIds, transaction);
        return GuardrailMemberAssignmentRow.destroy({
          where: { guardrailId: guardrail.id, userId: userIds },
          transaction,
        });
      });
      return { unassignedCount };
    },
  };
}
