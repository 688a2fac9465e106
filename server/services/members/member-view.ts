import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  MemberRole,
  MemberRoleSchema,
  MemberSchema,
  type CreateMemberRequest,
  type Member,
} from "../../../gen/gateway/v1/members_pb.js";
import { enumFromStored, wireName } from "../../../wire/enums.js";
import type { MemberRow } from "../../platform/db/governance-models.js";
import type { NewMember } from "./member-store.js";

export function toMember(row: MemberRow): Member {
  return create(MemberSchema, {
    id: row.id,
    email: row.email,
    firstName: row.firstName ?? undefined,
    lastName: row.lastName ?? undefined,
    role: enumFromStored(MemberRoleSchema, row.role),
    createdAt: timestampFromDate(row.createdAt),
  });
}

/** A create request (REST or operator) as the store takes it; the role defaults to org:member. */
export function newMemberOf(req: CreateMemberRequest): NewMember {
  return {
    email: req.email,
    firstName: req.firstName ?? null,
    lastName: req.lastName ?? null,
    role: wireName(MemberRoleSchema, req.role || MemberRole.MEMBER) as NewMember["role"],
  };
}
