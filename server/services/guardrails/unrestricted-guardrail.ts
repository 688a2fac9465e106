import type { Transaction } from "sequelize";
import { GuardrailRow } from "../../platform/db/governance-models.js";

/**
 * The default guardrail a workspace is created with (`default_guardrail_id` is never
 * null). It restricts nothing, so a workspace behaves as if it had no guardrail until it is edited
 * or another is made the default: no model, provider or region list, no ZDR demand, no budget, and
 * endpoints that may train on prompts allowed (the training flags refuse such endpoints when false).
 * Migration 0016 gives existing workspaces the same guardrail.
 */
export const UNRESTRICTED_GUARDRAIL = {
  name: "Default guardrail",
  description:
    "Restricts nothing. Edit it, or make another guardrail the workspace's default (PATCH /workspaces/{ref}).",
  enableFreeModelPublication: true,
  enableFreeModelTraining: true,
  enablePaidModelTraining: true,
} as const;

export async function createUnrestrictedGuardrail(
  id: string,
  workspace: { id: string; organizationId: string },
  transaction: Transaction,
): Promise<GuardrailRow> {
  return GuardrailRow.create(
    { id, organizationId: workspace.organizationId, workspaceId: workspace.id, ...UNRESTRICTED_GUARDRAIL },
    { transaction },
  );
}
