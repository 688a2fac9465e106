/**
 * The engine's one read of guardrails: those that govern a key, with their content filters
 * compiled, for the governance cache (key-governance.ts). The API's reads and writes of guardrails
 * are the guardrails service's own store.
 *
 * @module
 */
import type { JsonObject } from "@bufbuild/protobuf";
import { QueryTypes, type Sequelize } from "sequelize";
import type { StoredContentFilterBuiltin } from "../../platform/db/governance-models.js";
import type { ApiKeyRow } from "../../platform/db/models.js";
import { guardrailFilters } from "../content-filters/guardrail-filters.js";
import type { ApplyingGuardrail, GuardrailPath } from "./applying-guardrails.js";

interface ApplyingRow {
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
  content_filter_builtins: StoredContentFilterBuiltin[];
  content_filters: JsonObject[] | null;
  path: GuardrailPath;
}

// One statement, driven by the three paths so that each is an index lookup (assignments by key
// hash and by user, the workspace by id) however many guardrails the organization has. A guardrail
// reached several ways keeps its narrowest path (lowest rank), and the result is narrowest first.
const APPLYING_TO_KEY = `
  SELECT g.id, g.name, g.limit_micros, g.reset_interval, g.include_byok_in_budgets, g.allowed_models, g.ignored_models,
         g.allowed_providers, g.ignored_providers, g.allowed_data_regions, g.enforce_zdr, g.enforce_zdr_anthropic,
         g.enforce_zdr_google, g.enforce_zdr_openai, g.enforce_zdr_other, g.enforce_zdr_xai,
         g.enable_free_model_training, g.enable_paid_model_training, g.content_filter_builtins, g.content_filters,
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

/** The guardrails that govern `key`, narrowest first (applying-guardrails.ts says which reach it). */
export async function guardrailsApplyingTo(sequelize: Sequelize, key: ApiKeyRow): Promise<ApplyingGuardrail[]> {
  const rows = await sequelize.query<ApplyingRow>(APPLYING_TO_KEY, {
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
    contentFilters: guardrailFilters(row.id, row.name, row.content_filter_builtins, row.content_filters),
    path: row.path,
  }));
}
