import type { Sequelize } from "sequelize";
import type { Caller } from "../core/auth.js";
import { gatewayError } from "../core/errors.js";
import { WorkspaceBudgetRow, WorkspaceRow } from "../db/models.js";
import { guardrailsApplyingTo, type ApplyingGuardrail } from "../guardrails/applying-guardrails.js";

/**
 * What governs a key: its workspace (defaults, disabled server tools, BYOK rule), the workspace's
 * budgets and the guardrails that reach the key, read in parallel. GET /key shows it; every
 * inference call is decided by it.
 */
export interface KeyGovernance {
  workspace: WorkspaceRow;
  workspaceBudgets: WorkspaceBudgetRow[];
  guardrails: ApplyingGuardrail[];
}

export async function loadKeyGovernance(sequelize: Sequelize, { key }: Caller): Promise<KeyGovernance> {
  const [workspace, workspaceBudgets, guardrails] = await Promise.all([
    WorkspaceRow.findByPk(key.workspaceId),
    WorkspaceBudgetRow.findAll({ where: { workspaceId: key.workspaceId } }),
    guardrailsApplyingTo(sequelize, key),
  ]);
  if (!workspace) throw gatewayError(401, "Invalid API key");
  return { workspace, workspaceBudgets, guardrails };
}
