import { randomBytes } from "node:crypto";
import { UniqueConstraintError, type Transaction } from "sequelize";
import { gatewayError } from "../core/errors.js";
import { findPage } from "../core/pagination.js";
import { MemberRow } from "../db/governance-models.js";

/**
 * Organization members, shared by the management API (MembersService) and the operator
 * (OperatorService). A member's id is `user_` + 26 lowercase alphanumerics.
 *
 * Removing a member deletes their guardrail assignments (ON DELETE CASCADE); keys they created keep
 * working everywhere except intern chat, which answers 403 for a key whose creator is no longer a
 * member (spec 5.4; see `isMember`).
 */
export interface NewMember {
  email: string;
  firstName: string | null;
  lastName: string | null;
  role: "org:admin" | "org:member";
}

const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

function newMemberId(): string {
  const bytes = randomBytes(26);
  return "user_" + Array.from(bytes, (b) => ALPHABET[b % ALPHABET.length]).join("");
}

export async function createMember(organizationId: string, member: NewMember): Promise<MemberRow> {
  try {
    return await MemberRow.create({ id: newMemberId(), organizationId, ...member });
  } catch (err) {
    if (err instanceof UniqueConstraintError) throw gatewayError(409, `${member.email} is already a member of this organization`);
    throw err;
  }
}

/** Oldest first; `page` as in the API (offset, limit 1–100). */
export function listMembers(organizationId: string, page: { offset?: number; limit?: number }): Promise<{ rows: MemberRow[]; totalCount: number }> {
  return findPage(MemberRow, page, { where: { organizationId }, order: [["createdAt", "ASC"], ["id", "ASC"]] });
}

export async function removeMember(organizationId: string, userId: string): Promise<void> {
  const removed = await MemberRow.destroy({ where: { organizationId, id: userId } });
  if (removed === 0) throw gatewayError(404, `Member '${userId}' not found`);
}

export async function isMember(organizationId: string, userId: string, transaction?: Transaction): Promise<boolean> {
  return (await MemberRow.count({ where: { organizationId, id: userId }, transaction })) > 0;
}

/** Members of the organization among `userIds`; the rest are unknown to it. */
export async function membersAmong(organizationId: string, userIds: string[], transaction?: Transaction): Promise<MemberRow[]> {
  return MemberRow.findAll({ where: { organizationId, id: userIds }, transaction });
}
