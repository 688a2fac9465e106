import type { Sequelize, Transaction } from "sequelize";
import type { Caller } from "../../platform/rpc/auth.js";
import { gatewayError } from "../../../wire/errors.js";
import { confinedInternOf, workspaceOf } from "../../platform/rpc/scope.js";
import { UUID_PATTERN } from "../../../wire/text-rules.js";
import { readIntern, type InternRow, type InternScopeFilter } from "./intern-store.js";

/**
 * Which interns a key sees (docs/api/interns.md): those of its own organization and workspace, no
 * default-workspace fallback, and for an intern's own key only that intern. Everything else is
 * answered like a missing intern: 404, reason `not_found`. Every intern route (records, chat,
 * daemon, vault) goes through here.
 */
export function internScopeOf(caller: Caller): InternScopeFilter {
  return { ...workspaceOf(caller), onlyInternId: confinedInternOf(caller) };
}

export function internNotFound(internId: string) {
  return gatewayError(404, `Intern ${internId} not found`, { reason: "not_found", retryable: false });
}

async function findVisibleIntern(
  sequelize: Sequelize,
  caller: Caller,
  internId: string,
  options: { transaction?: Transaction; lock?: boolean } = {},
): Promise<InternRow | undefined> {
  // Any text reaches the daemon route (its id is only "at least one character"): not a UUID, not an intern.
  if (!UUID_PATTERN.test(internId)) return undefined;
  return readIntern(sequelize, internScopeOf(caller), internId.toLowerCase(), options);
}

export async function requireVisibleIntern(
  sequelize: Sequelize,
  caller: Caller,
  internId: string,
  options: { transaction?: Transaction; lock?: boolean } = {},
): Promise<InternRow> {
  const intern = await findVisibleIntern(sequelize, caller, internId, options);
  if (!intern) throw internNotFound(internId);
  return intern;
}

/** Lifecycle changes are the workspace's, not the intern's: its own key sees its intern but cannot steer it. */
export function requireNotOwnKey(caller: Caller, intern: InternRow): void {
  if (confinedInternOf(caller) === intern.id)
    throw gatewayError(403, "An intern's own key cannot change that intern's lifecycle or settings");
}
