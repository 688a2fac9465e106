import { QueryTypes, type Sequelize, type Transaction } from "sequelize";
import type { InternRecord, InternStatusName } from "./intern-record.js";
import { errorMessage } from "../../../wire/errors.js";

/**
 * The `interns` table (migration 0009) in plain SQL: lifecycle changes are conditional updates
 * (`WHERE status = … AND provision_generation = …`) that a Sequelize model would only obscure.
 * InternRow is the record of the seam plus what only the records service reads. The rest of the
 * family's tables: intern-store-runs.ts (the chat relay's sessions, runs, questions and steers),
 * intern-store-hosts.ts (where hosts run, and who was shown their access).
 */
export interface InternRow extends InternRecord {
  updatedAt: Date;
  attachedVaultId: string | null;
  lastFailureMessage: string | null;
  progress: { label: string; step: number; total: number } | null;
  /** Bumped by every provision, suspend and delete: a boot writes only while it is still current. */
  provisionGeneration: number;
  creatorUserId: string | null;
  /** Restarts after a lost runtime within the supervisor's window (intern-supervisor.ts). */
  recoveries: number;
  recoveredAt: Date | null;
}

interface StoredIntern {
  id: string;
  organization_id: string;
  workspace_id: string;
  name: string;
  description: string | null;
  instructions: string | null;
  model: string | null;
  status: InternStatusName;
  hostname: string | null;
  vault_id: string | null;
  attached_vault_id: string | null;
  last_failure_message: string | null;
  progress_label: string | null;
  progress_step: number | null;
  progress_total: number | null;
  provision_generation: number;
  creator_key_hash: string;
  creator_user_id: string | null;
  recoveries: number;
  recovered_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** A record's failure text is bounded: runtimes may report long errors. */
const MAX_FAILURE_MESSAGE = 1000;

export function failureMessage(err: unknown): string {
  const text = errorMessage(err);
  return (text.trim() || "unknown error").slice(0, MAX_FAILURE_MESSAGE);
}

function fromStored(row: StoredIntern): InternRow {
  return {
    id: row.id,
    organizationId: row.organization_id,
    workspaceId: row.workspace_id,
    name: row.name,
    // The seam's record has text where the wire has null: empty means unset.
    description: row.description ?? "",
    instructions: row.instructions ?? "",
    model: row.model ?? "",
    status: row.status,
    hostname: row.hostname,
    vaultId: row.vault_id,
    attachedVaultId: row.attached_vault_id,
    lastFailureMessage: row.last_failure_message,
    progress:
      row.progress_label !== null
        ? { label: row.progress_label, step: row.progress_step ?? 0, total: row.progress_total ?? 0 }
        : null,
    provisionGeneration: row.provision_generation,
    creatorKeyHash: row.creator_key_hash,
    creatorUserId: row.creator_user_id,
    recoveries: row.recoveries,
    recoveredAt: row.recovered_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export interface InternScopeFilter {
  organizationId: string;
  workspaceId: string;
  /** Set for an intern's own key: only that intern. */
  onlyInternId: string | null;
}

const SCOPE_SQL =
  "organization_id = :organizationId AND workspace_id = :workspaceId AND " +
  "(CAST(:onlyInternId AS uuid) IS NULL OR id = CAST(:onlyInternId AS uuid))";

export async function readIntern(
  sequelize: Sequelize,
  scope: InternScopeFilter,
  id: string,
  options: { transaction?: Transaction; lock?: boolean } = {},
): Promise<InternRow | undefined> {
  const [row] = await sequelize.query<StoredIntern>(
    `SELECT * FROM interns WHERE id = :id AND ${SCOPE_SQL}${options.lock ? " FOR UPDATE" : ""}`,
    {
      type: QueryTypes.SELECT,
      replacements: { id, ...scope },
      transaction: options.transaction,
    },
  );
  return row ? fromStored(row) : undefined;
}

/** The number that makes the intern's shell user (intern-home.ts); undefined when the intern is gone. */
export async function shellNumberOf(sequelize: Sequelize, internId: string): Promise<number | undefined> {
  const [row] = await sequelize.query<{ shell_number: number }>(
    "SELECT shell_number FROM interns WHERE id = :internId",
    {
      type: QueryTypes.SELECT,
      replacements: { internId },
    },
  );
  return row?.shell_number;
}

/** The intern by id alone, for background work that already checked the caller. */
export async function readInternById(
  sequelize: Sequelize,
  id: string,
  transaction?: Transaction,
): Promise<InternRow | undefined> {
  const [row] = await sequelize.query<StoredIntern>("SELECT * FROM interns WHERE id = :id", {
    type: QueryTypes.SELECT,
    replacements: { id },
    transaction,
  });
  return row ? fromStored(row) : undefined;
}

export interface InternListQuery {
  statuses: InternStatusName[];
  limit: number;
  /** (created_at ISO, id) of the last row of the previous page. */
  after: [string, string] | undefined;
}

export async function listInterns(
  sequelize: Sequelize,
  scope: InternScopeFilter,
  query: InternListQuery,
): Promise<InternRow[]> {
  const rows = await sequelize.query<StoredIntern>(
    `SELECT * FROM interns
      WHERE ${SCOPE_SQL}
        ${query.statuses.length > 0 ? "AND status IN (:statuses)" : ""}
        ${query.after ? "AND (created_at, id) < (CAST(:afterAt AS timestamptz), CAST(:afterId AS uuid))" : ""}
      ORDER BY created_at DESC, id DESC
      LIMIT :limit`,
    {
      type: QueryTypes.SELECT,
      replacements: {
        ...scope,
        statuses: query.statuses,
        afterAt: query.after?.[0] ?? null,
        afterId: query.after?.[1] ?? null,
        limit: query.limit,
      },
    },
  );
  return rows.map(fromStored);
}

export interface NewIntern {
  id: string;
  organizationId: string;
  workspaceId: string;
  name: string;
  description: string | null;
  instructions: string | null;
  model: string | null;
  attachedVaultId: string | null;
  creatorKeyHash: string;
  creatorUserId: string | null;
}

export async function insertIntern(sequelize: Sequelize, intern: NewIntern, transaction: Transaction): Promise<void> {
  await sequelize.query(
    `INSERT INTO interns (id, organization_id, workspace_id, name, description, instructions, model, status,
                          attached_vault_id, creator_key_hash, creator_user_id)
     VALUES (:id, :organizationId, :workspaceId, :name, :description, :instructions, :model, 'queued', :attachedVaultId,
             :creatorKeyHash, :creatorUserId)`,
    { replacements: { ...intern }, transaction },
  );
}

/** Columns a lifecycle step or an update may set; `undefined` leaves a column alone. */
export interface InternChange {
  name?: string;
  description?: string | null;
  instructions?: string | null;
  model?: string | null;
  status?: InternStatusName;
  hostname?: string | null;
  vaultId?: string | null;
  lastFailureMessage?: string | null;
  progress?: { label: string; step: number; total: number } | null;
  /** Starts a new generation: boots of older ones stop writing. */
  newGeneration?: boolean;
  /** This instance takes (or keeps) the runtime lease: it does the host work of the new state. */
  lease?: RuntimeLease;
  /** A restart after a lost runtime: `recoveries` becomes this count, `recovered_at` now (0 resets both). */
  recoveries?: number;
}

/** A gateway instance's hold on the host work of the interns it provisions, keeps or tears down. */
export interface RuntimeLease {
  owner: string;
  ms: number;
}

/** Statuses whose host work an instance holds a lease on (migration 0012). */
export const LEASED_STATUSES: readonly InternStatusName[] = ["provisioning", "running", "destroying"];

const COLUMNS: Record<Exclude<keyof InternChange, "progress" | "newGeneration" | "lease" | "recoveries">, string> = {
  name: "name",
  description: "description",
  instructions: "instructions",
  model: "model",
  status: "status",
  hostname: "hostname",
  vaultId: "vault_id",
  lastFailureMessage: "last_failure_message",
};

/**
 * Applies `change` when the intern is still in one of `from` (any status when omitted) and, with
 * `generation`, still in that provisioning generation. Answers the row after the change, or
 * undefined when the condition no longer held (someone else moved the intern on).
 */
export async function changeIntern(
  sequelize: Sequelize,
  id: string,
  change: InternChange,
  condition: { from?: readonly InternStatusName[]; generation?: number; transaction?: Transaction } = {},
): Promise<InternRow | undefined> {
  const sets: string[] = ["updated_at = now()"];
  const replacements: Record<string, unknown> = { id };
  for (const [key, column] of Object.entries(COLUMNS) as Array<[keyof typeof COLUMNS, string]>) {
    if (change[key] === undefined) continue;
    sets.push(`${column} = :${key}`);
    replacements[key] = change[key];
  }
  if (change.progress !== undefined) {
    sets.push("progress_label = :progressLabel", "progress_step = :progressStep", "progress_total = :progressTotal");
    replacements.progressLabel = change.progress?.label ?? null;
    replacements.progressStep = change.progress?.step ?? null;
    replacements.progressTotal = change.progress?.total ?? null;
  }
  if (change.newGeneration) sets.push("provision_generation = provision_generation + 1");
  if (change.lease) {
    sets.push("runtime_owner = :leaseOwner", "runtime_lease_until = now() + make_interval(secs => :leaseSeconds)");
    replacements.leaseOwner = change.lease.owner;
    replacements.leaseSeconds = change.lease.ms / 1000;
  }
  if (change.recoveries !== undefined) {
    sets.push("recoveries = :recoveries", "recovered_at = CASE WHEN :recoveries > 0 THEN now() END");
    replacements.recoveries = change.recoveries;
  }
  const where = ["id = :id"];
  if (condition.from) {
    where.push("status IN (:from)");
    replacements.from = condition.from;
  }
  if (condition.generation !== undefined) {
    where.push("provision_generation = :generation");
    replacements.generation = condition.generation;
  }
  const [rows] = (await sequelize.query(
    `UPDATE interns SET ${sets.join(", ")} WHERE ${where.join(" AND ")} RETURNING *`,
    {
      replacements,
      transaction: condition.transaction,
    },
  )) as [StoredIntern[], unknown];
  return rows[0] ? fromStored(rows[0]) : undefined;
}

export async function deleteIntern(sequelize: Sequelize, id: string, generation: number): Promise<boolean> {
  const [rows] = (await sequelize.query(
    "DELETE FROM interns WHERE id = :id AND status = 'destroying' AND provision_generation = :generation RETURNING id",
    {
      replacements: { id, generation },
    },
  )) as [unknown[], unknown];
  return rows.length > 0;
}

/** Extends every lease `lease.owner` holds: that instance is alive and still doing their host work. */
export async function renewRuntimeLeases(sequelize: Sequelize, lease: RuntimeLease): Promise<void> {
  await sequelize.query(
    "UPDATE interns SET runtime_lease_until = now() + make_interval(secs => :seconds) " +
      "WHERE runtime_owner = :owner AND status IN (:leased)",
    {
      replacements: { owner: lease.owner, seconds: lease.ms / 1000, leased: LEASED_STATUSES },
    },
  );
}

/**
 * Gives up `owner`'s leases (all of them, or one intern's while it is still in `generation`) so
 * that the next supervisor round of any instance takes those interns over at once instead of
 * waiting for the leases to lapse.
 */
export async function releaseRuntimeLeases(
  sequelize: Sequelize,
  owner: string,
  only?: { internId: string; generation: number },
): Promise<void> {
  await sequelize.query(
    `UPDATE interns SET runtime_owner = NULL, runtime_lease_until = now()
      WHERE runtime_owner = :owner
        AND status IN (:leased) ${only ? "AND id = :internId AND provision_generation = :generation" : ""}`,
    {
      replacements: {
        owner,
        internId: only?.internId ?? null,
        generation: only?.generation ?? null,
        leased: LEASED_STATUSES,
      },
    },
  );
}

/** The instances holding leases on interns now. */
export async function runtimeLeaseOwners(sequelize: Sequelize): Promise<string[]> {
  const rows = await sequelize.query<{ owner: string }>(
    "SELECT DISTINCT runtime_owner AS owner FROM interns WHERE status IN (:leased) AND runtime_owner IS NOT NULL",
    {
      type: QueryTypes.SELECT,
      replacements: { leased: LEASED_STATUSES },
    },
  );
  return rows.map((row) => row.owner);
}

/** Interns whose runtime lease lapsed (or that never had one), locked for `transaction`; others' claims are skipped. */
export async function lockLapsedInterns(
  sequelize: Sequelize,
  limit: number,
  transaction: Transaction,
): Promise<InternRow[]> {
  const rows = await sequelize.query<StoredIntern>(
    `SELECT * FROM interns
      WHERE status IN (:leased) AND (runtime_lease_until IS NULL OR runtime_lease_until < now())
      ORDER BY runtime_lease_until NULLS FIRST
      LIMIT :limit
      FOR UPDATE SKIP LOCKED`,
    { type: QueryTypes.SELECT, replacements: { leased: LEASED_STATUSES, limit }, transaction },
  );
  return rows.map(fromStored);
}
