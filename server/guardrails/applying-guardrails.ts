import { QueryTypes, type Sequelize } from "sequelize";
import type { ApiKeyRow } from "../db/models.js";

/**
 * The guardrails that govern one key, each once, with the narrowest way it reaches the key: an
 * assignment to the key itself, to the member who created the key, or being the default guardrail
 * of the key's workspace. Only what GET /key shows is loaded.
 */
export type GuardrailPath = "key" | "member" | "workspace";

export interface ApplyingGuardrail {
  id: string;
  limitMicros: string | null;
  resetInterval: "daily" | "weekly" | "monthly" | null;
  includeByokInBudgets: boolean;
  allowedDataRegions: string[] | null;
  path: GuardrailPath;
}

interface Row {
  id: string;
  limit_micros: string | null;
  reset_interval: ApplyingGuardrail["resetInterval"];
  include_byok_in_budgets: boolean;
  allowed_data_regions: string[] | null;
  path: GuardrailPath;
}

// One statement, driven by the three paths so that each is an index lookup (assignments by key
// hash and by user, the workspace by id) however many guardrails the organization has. A guardrail
// reached several ways keeps its narrowest path (lowest rank), and the result is narrowest first.
const SQL = `
  SELECT g.id, g.limit_micros, g.reset_interval, g.include_byok_in_budgets, g.allowed_data_regions,
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
    limitMicros: row.limit_micros,
    resetInterval: row.reset_interval,
    includeByokInBudgets: row.include_byok_in_budgets,
    allowedDataRegions: row.allowed_data_regions,
    path: row.path,
  }));
}
