import { randomBytes } from "node:crypto";
import { QueryTypes, UniqueConstraintError, type Transaction } from "sequelize";
import { gatewayError } from "../../../wire/errors.js";
import { findPage } from "../../platform/rpc/pagination.js";
import { MemberRow } from "../../platform/db/governance-models.js";
import { ApiKeyRow } from "../../platform/db/models.js";

/**
 * Organization members, shared by the management API (MembersService) and the operator
 * (OperatorService). A member's id is `user_` + 26 lowercase alphanumerics.
 *
 * Removing a member deletes their guardrail assignments (ON DELETE CASCADE) and disables the API
 * keys they created (see `removeMember`).
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
  return `user_${Array.from(bytes, (b) => ALPHABET[b % ALPHABET.length]).join("")}`;
}

export async function createMember(
  organizationId: string,
  member: NewMember,
  transaction?: Transaction,
): Promise<MemberRow> {
  try {
    return await MemberRow.create({ id: newMemberId(), organizationId, ...member }, { transaction });
  } catch (err) {
    if (err instanceof UniqueConstraintError)
      throw gatewayError(409, `${member.email} is already a member of this organization`);
    throw err;
  }
}

/** Oldest first; `page` as in the API (offset, limit 1–100). */
export function listMembers(
  organizationId: string,
  page: { offset?: number; limit?: number },
): Promise<{ rows: MemberRow[]; totalCount: number }> {
  return findPage(MemberRow, page, {
    where: { organizationId },
    order: [
      ["createdAt", "ASC"],
      ["id", "ASC"],
    ],
  });
}

/**
 * The organization's owner: an admin member created with the organization (or by migration 0017
 * for older ones). Keys minted without a member belong to it (keys/key-issuer.ts), so every key
 * has a `creator_user_id`. At most one per organization (a unique index); it cannot be removed.
 */
export async function createOwner(organizationId: string, email: string, transaction: Transaction): Promise<MemberRow> {
  const owner = await createMember(
    organizationId,
    { email, firstName: null, lastName: null, role: "org:admin" },
    transaction,
  );
  await MemberRow.sequelize!.query("UPDATE members SET is_owner = true WHERE id = :id", {
    replacements: { id: owner.id },
    transaction,
  });
  return owner;
}

export async function ownerOf(organizationId: string, transaction?: Transaction): Promise<string | null> {
  const [row] = await MemberRow.sequelize!.query<{ id: string }>(
    "SELECT id FROM members WHERE organization_id = :organizationId AND is_owner",
    {
      type: QueryTypes.SELECT,
      replacements: { organizationId },
      transaction,
    },
  );
  return row?.id ?? null;
}

/**
 * Removes a member and, in the same transaction, disables the API keys they created, management
 * keys included: someone who left must not keep acting for the organization through a key. An
 * admin who wants one of those keys to go on (a service's key minted by a departed colleague)
 * re-enables it with `PATCH /keys/{hash}`; it then works everywhere except intern chat, which
 * refuses a key whose creator is no longer a member (`isMember`). Interns' own keys are left to
 * their interns, whose chat refuses the same way once their creator left.
 */
export async function removeMember(organizationId: string, userId: string): Promise<void> {
  if ((await ownerOf(organizationId)) === userId)
    throw gatewayError(409, `Member '${userId}' is the organization's owner and cannot be removed`);
  await MemberRow.sequelize!.transaction(async (transaction) => {
    const removed = await MemberRow.destroy({ where: { organizationId, id: userId }, transaction });
    if (removed === 0) throw gatewayError(404, `Member '${userId}' not found`);
    await ApiKeyRow.update(
      { disabled: true },
      { where: { organizationId, creatorUserId: userId, internId: null, disabled: false }, transaction },
    );
  });
}

export async function isMember(organizationId: string, userId: string, transaction?: Transaction): Promise<boolean> {
  return (await MemberRow.count({ where: { organizationId, id: userId }, transaction })) > 0;
}

/** Members of the organization among `userIds`; the rest are unknown to it. */
export async function membersAmong(
  organizationId: string,
  userIds: string[],
  transaction?: Transaction,
): Promise<MemberRow[]> {
  return MemberRow.findAll({ where: { organizationId, id: userIds }, transaction });
}
