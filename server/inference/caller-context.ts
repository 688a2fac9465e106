import { QueryTypes } from "sequelize";
import type { Caller } from "../core/auth.js";
import { gatewayError } from "../core/errors.js";
import { WorkspaceBudgetRow, WorkspaceRow } from "../db/models.js";
import type { Deps } from "../deps.js";
import { guardrailsApplyingTo, type ApplyingGuardrail } from "../guardrails/applying-guardrails.js";

/**
 * Everything governance needs to know about the caller of an inference call, read in one batch of
 * parallel queries: the key's workspace (defaults, disabled server tools, BYOK rule), its budgets,
 * the guardrails that reach the key, and which providers the workspace brought its own key for.
 */
export interface CallerContext {
  caller: Caller;
  workspace: WorkspaceRow;
  workspaceBudgets: WorkspaceBudgetRow[];
  guardrails: ApplyingGuardrail[];
  /** Providers with an enabled BYOK credential in the workspace. */
  byokProviders: ReadonlySet<string>;
}

export async function loadCallerContext({ sequelize }: Deps, caller: Caller): Promise<CallerContext> {
  const { key } = caller;
  const [workspace, workspaceBudgets, guardrails, byok] = await Promise.all([
    WorkspaceRow.findByPk(key.workspaceId),
    WorkspaceBudgetRow.findAll({ where: { workspaceId: key.workspaceId } }),
    guardrailsApplyingTo(sequelize, key),
    sequelize.query<{ provider: string }>("SELECT DISTINCT provider FROM byok_credentials WHERE workspace_id = :workspaceId AND NOT disabled", {
      type: QueryTypes.SELECT,
      replacements: { workspaceId: key.workspaceId },
    }),
  ]);
  if (!workspace) throw gatewayError(401, "Invalid API key");
  return { caller, workspace, workspaceBudgets, guardrails, byokProviders: new Set(byok.map((row) => row.provider)) };
}
