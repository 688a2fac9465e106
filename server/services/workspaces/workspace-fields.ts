import type { Attributes, Transaction } from "sequelize";
import {
  ProviderSortSchema,
  ServerToolSchema,
  type ProviderSort,
  type ServerTool,
} from "../../../gen/gateway/v1/workspaces_pb.js";
import { gatewayError } from "../../../wire/errors.js";
import { wireName, wireNamesOf } from "../../../wire/enums.js";
import { GuardrailRow } from "../../platform/db/governance-models.js";
import type { WorkspaceRow } from "../../platform/db/models.js";
import type { SvcRateLimit } from "../../../gen/gateway/v1/common_pb.js";
import { rateLimitColumns } from "../../engine/index.js";

/**
 * The writable fields of a workspace  and the columns they set, shared by
 * POST (every field, absent ones taking their default) and PATCH (the fields sent, where null
 * restores the default). Length, pattern and range rules are the proto's and were checked before
 * the handler ran; what needs the database or the enum tables is checked here.
 */
export interface WorkspaceFieldValues {
  name?: string;
  slug?: string;
  description?: string;
  defaultImageModel?: string;
  defaultTextModel?: string;
  defaultProviderSort: ProviderSort;
  disabledServerTools: ServerTool[];
  ioLoggingApiKeyIds: string[];
  ioLoggingSamplingRate?: number;
  isDataDiscountLoggingEnabled?: boolean;
  isObservabilityBroadcastEnabled?: boolean;
  isObservabilityIoLoggingEnabled?: boolean;
  includeByokInBudgets?: boolean;
  defaultGuardrailId?: string;
  svcCacheTtlSeconds?: number;
  svcRateLimit?: SvcRateLimit;
}

export type WorkspaceColumns = Partial<Attributes<WorkspaceRow>>;

type FieldRule = (
  values: WorkspaceFieldValues,
  organizationId: string,
  transaction?: Transaction,
) => WorkspaceColumns | Promise<WorkspaceColumns>;

/** Keyed by proto field name, the names `changedFields` reports. */
const RULES: Record<string, FieldRule> = {
  name: (v) => ({ name: notNull(v.name, "name") }),
  slug: (v) => ({ slug: notNull(v.slug, "slug") }),
  description: (v) => ({ description: v.description ?? null }),
  default_image_model: (v) => ({ defaultImageModel: v.defaultImageModel ?? null }),
  default_text_model: (v) => ({ defaultTextModel: v.defaultTextModel ?? null }),
  default_provider_sort: (v) => ({ defaultProviderSort: wireName(ProviderSortSchema, v.defaultProviderSort) ?? null }),
  // An empty list and null both mean "none"; stored as null so the two read back alike.
  disabled_server_tools: (v) => ({
    disabledServerTools: storedList(wireNamesOf(ServerToolSchema, [...new Set(v.disabledServerTools)])),
  }),
  io_logging_api_key_ids: (v) => ({ ioLoggingApiKeyIds: storedList([...new Set(v.ioLoggingApiKeyIds)]) }),
  // Null restores full sampling, the default.
  io_logging_sampling_rate: (v) => ({ ioLoggingSamplingRate: String(v.ioLoggingSamplingRate ?? 1) }),
  is_data_discount_logging_enabled: (v) => ({ isDataDiscountLoggingEnabled: v.isDataDiscountLoggingEnabled ?? false }),
  is_observability_broadcast_enabled: (v) => ({
    isObservabilityBroadcastEnabled: v.isObservabilityBroadcastEnabled ?? false,
  }),
  is_observability_io_logging_enabled: (v) => ({
    isObservabilityIoLoggingEnabled: v.isObservabilityIoLoggingEnabled ?? false,
  }),
  include_byok_in_budgets: (v) => ({ includeByokInBudgets: v.includeByokInBudgets ?? false }),
  svc_cache_ttl_seconds: (v) => ({ cacheTtlSeconds: v.svcCacheTtlSeconds ?? null }),
  svc_rate_limit: (v) => rateLimitColumns(v.svcRateLimit),
  // Never null: a PATCH replaces it with another guardrail, it cannot clear it.
  default_guardrail_id: async (v, organizationId, transaction) => ({
    defaultGuardrailId: await guardrailOf(
      organizationId,
      notNull(v.defaultGuardrailId, "default_guardrail_id"),
      transaction,
    ),
  }),
};

/** The fields a create sets; without `default_guardrail_id` the workspace gets a new, unrestricted one. */
export function createdWorkspaceFields(values: WorkspaceFieldValues): ReadonlySet<string> {
  return new Set(
    Object.keys(RULES).filter((field) => field !== "default_guardrail_id" || values.defaultGuardrailId !== undefined),
  );
}

/** The columns that `fields` (proto names) set from `values`; 400 names the first bad field. */
export async function workspaceColumns(
  values: WorkspaceFieldValues,
  fields: ReadonlySet<string>,
  organizationId: string,
  transaction?: Transaction,
): Promise<WorkspaceColumns> {
  const columns: WorkspaceColumns = {};
  for (const field of fields) {
    const rule = RULES[field];
    if (rule) Object.assign(columns, await rule(values, organizationId, transaction));
  }
  return columns;
}

function notNull(value: string | undefined, field: string): string {
  if (value === undefined) throw gatewayError(400, `${field} cannot be null`);
  return value;
}

/** A default guardrail must be one of the organization's own; another's is as unknown as a missing one. */
async function guardrailOf(organizationId: string, id: string, transaction?: Transaction): Promise<string> {
  const guardrail = await GuardrailRow.findOne({
    where: { organizationId, id: id.toLowerCase() },
    attributes: ["id"],
    transaction,
  });
  if (!guardrail) throw gatewayError(400, `default_guardrail_id '${id}' is not a guardrail of this organization`);
  return guardrail.id;
}

function storedList(values: string[]): string[] | null {
  return values.length === 0 ? null : values;
}
