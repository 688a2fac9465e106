import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { UniqueConstraintError } from "sequelize";
import { EndUserSchema, type EndUsersService, type EndUser } from "../../../gen/gateway/v1/end_users_pb.js";
import { callerOf, type Caller } from "../../platform/rpc/auth.js";
import { gatewayError } from "../../../wire/errors.js";
import { findPage } from "../../platform/rpc/pagination.js";
import { findInOrganization, inOrganization } from "../../platform/rpc/scope.js";
import { EndUserRow } from "../../platform/db/models.js";
import { assertAddressable, assertTrackingString } from "../../engine/index.js";

/** Registered end users of the caller's organization. */
export function endUsersService(): Partial<ServiceImpl<typeof EndUsersService>> {
  return {
    async listEndUsers(req, ctx) {
      const caller = callerOf(ctx);
      const where = {
        ...inOrganization(caller),
        ...(req.includeInactive ? {} : { isActive: true }),
        ...(req.user === undefined ? {} : { user: req.user }),
      };
      const { rows, totalCount } = await findPage(EndUserRow, req, { where, order: [["user", "ASC"]] });
      return { data: rows.map(toEndUser), totalCount };
    },

    async createEndUser(req, ctx) {
      assertTrackingString(req.user);
      try {
        const row = await EndUserRow.create({
          ...inOrganization(callerOf(ctx)),
          user: req.user,
          isActive: req.isActive ?? true,
        });
        return { data: toEndUser(row) };
      } catch (err) {
        if (err instanceof UniqueConstraintError) throw gatewayError(409, "This end user is already registered");
        throw err;
      }
    },

    async getEndUser(req, ctx) {
      return { data: toEndUser(await findEndUser(callerOf(ctx), req.user)) };
    },

    async updateEndUser(req, ctx) {
      const row = await findEndUser(callerOf(ctx), req.user);
      await row.update({ isActive: req.isActive ?? row.isActive, updatedAt: new Date() });
      return { data: toEndUser(row) };
    },

    async deleteEndUser(req, ctx) {
      const row = await findEndUser(callerOf(ctx), req.user);
      if (row.isActive) await row.update({ isActive: false, updatedAt: new Date() });
      return { data: toEndUser(row) };
    },
  };
}

async function findEndUser(caller: Caller, user: string): Promise<EndUserRow> {
  assertAddressable(user);
  return findInOrganization(EndUserRow, caller, { user }, "End user not found");
}

function toEndUser(row: EndUserRow): EndUser {
  return create(EndUserSchema, {
    user: row.user,
    isActive: row.isActive,
    createdAt: timestampFromDate(row.createdAt),
    updatedAt: timestampFromDate(row.updatedAt),
  });
}
