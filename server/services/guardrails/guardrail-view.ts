import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { DataRegionSchema, ResetIntervalSchema } from "../../../gen/gateway/v1/common_pb.js";
import {
  GuardrailKeyAssignmentSchema,
  GuardrailMemberAssignmentSchema,
  GuardrailSchema,
  type Guardrail,
  type GuardrailKeyAssignment,
  type GuardrailMemberAssignment,
} from "../../../gen/gateway/v1/guardrails_pb.js";
import { microsToUsd } from "../../engine/index.js";
import { optionalTimestamp } from "../../platform/rpc/timestamps.js";
import { enumFromStored } from "../../../wire/enums.js";
import type {
  GuardrailKeyAssignmentRow,
  GuardrailMemberAssignmentRow,
  GuardrailRow,
} from "../../platform/db/governance-models.js";
import type { ApiKeyRow } from "../../platform/db/models.js";

/** Guardrails and their assignments as the API shows them. Null lists render as null. */
export function toGuardrail(row: GuardrailRow): Guardrail {
  return create(GuardrailSchema, {
    id: row.id,
    name: row.name,
    description: row.description ?? undefined,
    workspaceId: row.workspaceId,
    createdAt: timestampFromDate(row.createdAt),
    updatedAt: optionalTimestamp(row.updatedAt),
    limitUsd: row.limitMicros === null ? undefined : microsToUsd(row.limitMicros),
    resetInterval: enumFromStored(ResetIntervalSchema, row.resetInterval),
    includeByokInBudgets: row.includeByokInBudgets,
    allowedModels: row.allowedModels ?? [],
    ignoredModels: row.ignoredModels ?? [],
    allowedProviders: row.allowedProviders ?? [],
    ignoredProviders: row.ignoredProviders ?? [],
    allowedDataRegions: (row.allowedDataRegions ?? []).map((region) => enumFromStored(DataRegionSchema, region)),
    enforceZdr: row.enforceZdr ?? undefined,
    enforceZdrAnthropic: row.enforceZdrAnthropic ?? undefined,
    enforceZdrGoogle: row.enforceZdrGoogle ?? undefined,
    enforceZdrOpenai: row.enforceZdrOpenai ?? undefined,
    enforceZdrOther: row.enforceZdrOther ?? undefined,
    enforceZdrXai: row.enforceZdrXai ?? undefined,
    enableFreeModelPublication: row.enableFreeModelPublication,
    enableFreeModelTraining: row.enableFreeModelTraining,
    enablePaidModelTraining: row.enablePaidModelTraining,
    contentFilterBuiltins: row.contentFilterBuiltins,
    contentFilters: row.contentFilters ?? [],
  });
}

/** `key` is the assigned key; it always exists because assignments cascade with their key. */
export function toKeyAssignment(
  row: GuardrailKeyAssignmentRow,
  key: Pick<ApiKeyRow, "label" | "name">,
): GuardrailKeyAssignment {
  return create(GuardrailKeyAssignmentSchema, {
    id: row.id,
    guardrailId: row.guardrailId,
    keyHash: row.keyHash,
    keyLabel: key.label,
    keyName: key.name,
    assignedBy: row.assignedBy,
    createdAt: timestampFromDate(row.createdAt),
  });
}

export function toMemberAssignment(
  row: GuardrailMemberAssignmentRow,
  organizationId: string,
): GuardrailMemberAssignment {
  return create(GuardrailMemberAssignmentSchema, {
    id: row.id,
    userId: row.userId,
    organizationId,
    guardrailId: row.guardrailId,
    assignedBy: row.assignedBy ?? undefined,
    createdAt: timestampFromDate(row.createdAt),
  });
}
