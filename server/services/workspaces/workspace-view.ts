import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { BudgetIntervalSchema } from "../../../gen/gateway/v1/common_pb.js";
import {
  ProviderSortSchema,
  ServerToolSchema,
  WorkspaceBudgetSchema,
  WorkspaceSchema,
  type Workspace,
  type WorkspaceBudget,
} from "../../../gen/gateway/v1/workspaces_pb.js";
import { microsToUsd, svcRateLimitOf } from "../../engine/index.js";
import { optionalTimestamp } from "../../platform/rpc/timestamps.js";
import { enumFromStored } from "../../../wire/enums.js";
import type { WorkspaceBudgetRow, WorkspaceRow } from "../../platform/db/models.js";

export function toWorkspace(row: WorkspaceRow): Workspace {
  return create(WorkspaceSchema, {
    id: row.id,
    name: row.name,
    slug: row.slug,
    description: row.description ?? undefined,
    createdAt: timestampFromDate(row.createdAt),
    updatedAt: optionalTimestamp(row.updatedAt),
    createdBy: row.createdBy,
    // NOT NULL since migration 0016.
    defaultGuardrailId: row.defaultGuardrailId ?? "",
    defaultImageModel: row.defaultImageModel ?? undefined,
    defaultTextModel: row.defaultTextModel ?? undefined,
    defaultProviderSort: enumFromStored(ProviderSortSchema, row.defaultProviderSort),
    disabledServerTools: (row.disabledServerTools ?? []).map((tool) => enumFromStored(ServerToolSchema, tool)),
    includeByokInBudgets: row.includeByokInBudgets,
    ioLoggingApiKeyIds: row.ioLoggingApiKeyIds ?? [],
    ioLoggingSamplingRate: Number(row.ioLoggingSamplingRate),
    isDataDiscountLoggingEnabled: row.isDataDiscountLoggingEnabled,
    isObservabilityBroadcastEnabled: row.isObservabilityBroadcastEnabled,
    isObservabilityIoLoggingEnabled: row.isObservabilityIoLoggingEnabled,
    svcCacheTtlSeconds: row.cacheTtlSeconds ?? undefined,
    svcRateLimit: svcRateLimitOf(row),
  });
}

export function toWorkspaceBudget(row: WorkspaceBudgetRow): WorkspaceBudget {
  return create(WorkspaceBudgetSchema, {
    id: row.id,
    workspaceId: row.workspaceId,
    limitUsd: microsToUsd(row.limitMicros),
    resetInterval: enumFromStored(BudgetIntervalSchema, row.interval),
    createdAt: timestampFromDate(row.createdAt),
    updatedAt: optionalTimestamp(row.updatedAt),
  });
}
