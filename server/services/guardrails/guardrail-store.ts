import type { ConnectError } from "@connectrpc/connect";
import type { Transaction } from "sequelize";
import type { Caller } from "../../platform/rpc/auth.js";
import { gatewayError } from "../../../wire/errors.js";
import { findInOrganization, inOrganization, type LookupOptions } from "../../platform/rpc/scope.js";
import { GuardrailRow } from "../../platform/db/governance-models.js";
import { ApiKeyRow, type WorkspaceRow } from "../../platform/db/models.js";
import { membersAmong } from "../members/member-store.js";

/** A guardrail of the caller's organization (404 otherwise), optionally locked. */
export function findGuardrail(caller: Caller, id: string, options: LookupOptions = {}): Promise<GuardrailRow> {
  return findInOrganization(GuardrailRow, caller, { id: id.toLowerCase() }, `Guardrail '${id}' not found`, options);
}

/** 409 for removing a guardrail that a workspace still has as its default (never null). */
export function defaultGuardrailInUse(what: string, workspace: WorkspaceRow): ConnectError {
  return gatewayError(
    409,
    `${what}; make another guardrail its default first (PATCH /workspaces/${workspace.slug} with default_guardrail_id)`,
  );
}

/**
 * Refuses the whole request when any hash is not a key of the caller's organization. The keys are
 * share-locked so none can be deleted before the caller's transaction commits.
 */
export async function requireOrganizationKeys(
  caller: Caller,
  hashes: string[],
  transaction: Transaction,
): Promise<void> {
  const found = await ApiKeyRow.findAll({
    attributes: ["hash"],
    where: { ...inOrganization(caller), hash: hashes },
    transaction,
    lock: transaction.LOCK.SHARE,
  });
  rejectUnknown("key hashes", hashes, new Set(found.map((key) => key.hash)));
}

/** Refuses the whole request when any user id is not a member of the caller's organization. */
export async function requireMembers(caller: Caller, userIds: string[], transaction: Transaction): Promise<void> {
  const members = await membersAmong(caller.organization.id, userIds, transaction);
  rejectUnknown("member user ids", userIds, new Set(members.map((member) => member.id)));
}

/** 400 naming the values that are not among `known` (the first few, so the message stays short). */
export function rejectUnknown(what: string, given: string[], known: ReadonlySet<string>): void {
  const unknown = given.filter((value) => !known.has(value));
  if (unknown.length === 0) return;
  const shown = unknown
    .slice(0, 10)
    .map((value) => `'${value}'`)
    .join(", ");
  const more = unknown.length > 10 ? ` and ${unknown.length - 10} more` : "";
  throw gatewayError(400, `Unknown ${what} (not in this organization): ${shown}${more}`);
}

/** The distinct values of a request list, in the order given. */
export function distinct(values: string[]): string[] {
  return [...new Set(values)];
}
