import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { InternSchema, InternStatusSchema, type Intern } from "../../../gen/gateway/v1/interns_pb.js";
import { enumFromStored } from "../../../wire/enums.js";
import type { InternRow } from "./intern-store.js";

/** The public intern object (interns.proto `Intern`, OpenRouter's shape). */
export function toIntern(row: InternRow): Intern {
  return create(InternSchema, {
    id: row.id,
    name: row.name,
    description: row.description || undefined,
    instructions: row.instructions || undefined,
    model: row.model || undefined,
    status: enumFromStored(InternStatusSchema, row.status),
    hostname: row.hostname ?? undefined,
    workspaceId: row.workspaceId,
    vaultId: row.vaultId ?? undefined,
    attachedVaultId: row.attachedVaultId ?? undefined,
    lastFailureMessage: row.lastFailureMessage ?? undefined,
    progress: row.progress
      ? { stepLabel: row.progress.label, stepNumber: row.progress.step, totalSteps: row.progress.total }
      : undefined,
    createdAt: timestampFromDate(row.createdAt),
    updatedAt: timestampFromDate(row.updatedAt),
  });
}
