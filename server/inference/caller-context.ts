import { QueryTypes } from "sequelize";
import type { Caller } from "../core/auth.js";
import type { Deps } from "../deps.js";
import { loadKeyGovernance, type KeyGovernance } from "../governance/key-governance.js";

/**
 * Everything an inference call needs to know about its caller, read in one batch of parallel
 * queries: the key's governance (workspace, budgets, guardrails) and which providers the workspace
 * brought its own key for.
 */
export interface CallerContext extends KeyGovernance {
  caller: Caller;
  /** Providers with an enabled BYOK credential in the workspace. */
  byokProviders: ReadonlySet<string>;
}

export async function loadCallerContext({ sequelize }: Deps, caller: Caller): Promise<CallerContext> {
  const [governance, byok] = await Promise.all([
    loadKeyGovernance(sequelize, caller),
    sequelize.query<{ provider: string }>("SELECT DISTINCT provider FROM byok_credentials WHERE workspace_id = :workspaceId AND NOT disabled", {
      type: QueryTypes.SELECT,
      replacements: { workspaceId: caller.key.workspaceId },
    }),
  ]);
  return { ...governance, caller, byokProviders: new Set(byok.map((row) => row.provider)) };
}
