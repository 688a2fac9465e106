import type { Sequelize } from "sequelize";
import type { Caller } from "../../platform/rpc/auth.js";
import { gatewayError } from "../../../wire/errors.js";
import { ByokCredentialRow } from "../../platform/db/governance-models.js";
import { WorkspaceBudgetRow, WorkspaceRow } from "../../platform/db/models.js";
import type { ApplyingGuardrail } from "./applying-guardrails.js";
import { guardrailsApplyingTo } from "./applying-guardrails-store.js";

/**
 * What governs a key: its workspace (defaults, disabled server tools, BYOK rule), the workspace's
 * budgets, the guardrails that reach the key and the providers the workspace brought its own key
 * for, read in parallel. GET /key shows it; every inference call is decided by it. Read through
 * the governance cache (governance-cache.ts), so the rows are shared: never modify them.
 */
export interface KeyGovernance {
  workspace: WorkspaceRow;
  workspaceBudgets: WorkspaceBudgetRow[];
  guardrails: ApplyingGuardrail[];
  /** Providers with an enabled BYOK credential in the workspace. */
  byokProviders: ReadonlySet<string>;
}

export async function loadKeyGovernance(sequelize: Sequelize, { key }: Caller): Promise<KeyGovernance> {
  const [workspace, workspaceBudgets, guardrails, byok] = await Promise.all([
    WorkspaceRow.findByPk(key.workspaceId),
    WorkspaceBudgetRow.findAll({ where: { workspaceId: key.workspaceId } }),
    guardrailsApplyingTo(sequelize, key),
    ByokCredentialRow.findAll({ attributes: ["provider"], where: { workspaceId: key.workspaceId, disabled: false } }),
  ]);
  if (!workspace) throw gatewayError(401, "Invalid API key");
  return { workspace, workspaceBudgets, guardrails, byokProviders: new Set(byok.map((row) => row.provider)) };
}
