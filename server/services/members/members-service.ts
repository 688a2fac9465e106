import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { DeletedResponseSchema } from "../../../gen/gateway/v1/common_pb.js";
import type { MembersService } from "../../../gen/gateway/v1/members_pb.js";
import { callerOf } from "../../platform/rpc/auth.js";
import { createMember, listMembers, removeMember } from "./member-store.js";
import { newMemberOf, toMember } from "./member-view.js";

/** The caller's organization's members (management keys). */
export function membersService(): ServiceImpl<typeof MembersService> {
  return {
    async listMembers(req, ctx) {
      const { rows, totalCount } = await listMembers(callerOf(ctx).organization.id, req);
      return { data: rows.map(toMember), totalCount };
    },

    async createMember(req, ctx) {
      return { data: toMember(await createMember(callerOf(ctx).organization.id, newMemberOf(req))) };
    },

    async deleteMember(req, ctx) {
      await removeMember(callerOf(ctx).organization.id, req.userId);
      return create(DeletedResponseSchema, { deleted: true });
    },
  };
}
