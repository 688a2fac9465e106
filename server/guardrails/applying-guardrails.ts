import { QueryTypes, type Sequelize } from "sequelize";
import type { ApiKeyRow } from "../db/models.js";

/**
 * The guardrails that govern one key, each once, with the narrowest way it reaches the key: an
 * assignment to the key itself, to the member who created the key, or being the default guardrail
 * of the key's workspace. Budgets for GET /key and admission; the routing policy (models,
 * providers, data regions, ZDR, training) for the models list and the request router, which read
 * it through server/governance/endpoint-policy.ts.
 */
export type GuardrailPath = "key" | "member" | "workspace";

export interface ApplyingGuardrail {
  id: string;
  name: string;
  limitMicros: string | null;
  resetInterval: "daily" | "weekly" | "monthly" | null;
  includeByokInBudgets: boolean;
  allowedModels: string[] | null;
  ignoredModels: string[] | null;
  allowedProviders: string[] | null;
  ignoredProviders: string[] | null;
  allowedDataRegions: string[] | null;
  enforceZdr: boolean | null;
  enforceZdrAnthropic: boolean | null;
  enforceZdrGoogle: boolean | null;
  enforceZdrOpenai: boolean | null;
  enforceZdrOther: boolean | null;
  enforceZdrXai: boolean | null;
  enableFreeModelTraining: boolean;
  enablePaidModelTraining: boolean;
  path: GuardrailPath;
}

interface Row {
  id: string;
  name: string;
  limit_micros: string | null;
  reset_interval: ApplyingGuardrail["resetInterval"];
  include_byok_in_budgets: boolean;
  allowed_models: string[] | null;
  ignored_models: string[] | null;
  allowed_providers: string[] | null;
  ignored_providers: string[] | null;
  allowed_data_regions: string[] | null;
  enforce_zdr: boolean | null;
  enforce_zdr_anthropic: boolean | null;
  enforce_zdr_google: boolean | null;
  enforce_zdr_openai: boolean | null;
  enforce_zdr_other: boolean | null;
  enforce_zdr_xai: boolean | null;
  enable_free_model_training: boolean;
  enable_paid_model_training: boolean;
  path: GuardrailPath;
}

// One statement, driven by the three paths so that each is an index lookup (assignments by key
// hash and by user, the workspace by id) however many guardrails the organization has. A guardrail
// reached several ways keeps its narrowest path (lowest rank), and the result is narrowest first.
const SQL = `
  SELECT g.id, g.name, g.limit_micros, g.reset_interval, g.include_byok_in_budgets, g.allowed_models, g.ignored_models,
         g.allowed_providers, g.ignored_providers, g.allowed_data_regions, g.enforce_zdr, g.enforce_zdr_anthropic,
         g.enforce_zdr_google, g.enforce_zdr_openai, g.enforce_zdr_other, g.enforce_zdr_xai,
         g.enable_free_model_training, g.enable_paid_model_training,
         CASE min(r.rank) WHEN 1 THEN 'key' WHEN 2 THEN 'member' ELSE 'workspace' END AS path
    FROM (SELECT guardrail_id, 1 AS rank FROM guardrail_key_assignments WHERE key_hash = :keyHash
          UNION ALL
          SELECT guardrail_id, 2 FROM guardrail_member_assignments WHERE user_id = :creatorUserId
          UNION ALL
          SELECT default_guardrail_id, 3 FROM workspaces WHERE id = :workspaceId) AS r
    JOIN guardrails g ON g.id = r.guardrail_id
   WHERE g.organization_id = :organizationId
   GROUP BY g.id
   ORDER BY min(r.rank), g.created_at, g.id`;

export async function guardrailsApplyingTo(sequelize: Sequelize, key: ApiKeyRow): Promise<ApplyingGuardrail[]> {
  const rows = await sequelize.query<Row>(SQL, {
    type: QueryTypes.SELECT,
    replacements: {
      keyHash: key.hash,
      // A key without a creator has no member path; `= NULL` matches nothing.
      creatorUserId: key.creatorUserId ?? null,
      workspaceId: key.workspaceId,
      organizationId: key.organizationId,
    },
  });
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    limitMicros: row.limit_micros,
    resetInterval: row.reset_interval,
    includeByokInBudgets: row.include_byok_in_budgets,
    allowedModels: row.allowed_models,
    ignoredModels: row.ignored_models,
    allowedProviders: row.allowed_providers,
    ignoredProviders: row.ignored_providers,
    allowedDataRegions: row.allowed_data_regions,
    enforceZdr: row.enforce_zdr,
    enforceZdrAnthropic: row.enforce_zdr_anthropic,
    enforceZdrGoogle: row.enforce_zdr_google,
    enforceZdrOpenai: row.enforce_zdr_openai,
    enforceZdrOther: row.enforce_zdr_other,
    enforceZdrXai: row.enforce_zdr_xai,
    enableFreeModelTraining: row.enable_free_model_training,
    enablePaidModelTraining: row.enable_paid_model_training,
    path: row.path,
  }));
}
