import { QueryTypes, type Sequelize } from "sequelize";
import type { WorkspaceScope } from "../../platform/rpc/scope.js";

/** The `files` table (migration 0006-files): one row per stored file, own or on a provider. */
export type FileLocation = "own" | FileProvider;
/** The providers that keep files for a workspace (the `provider` parameter's values). */
export type FileProvider = "openai" | "anthropic";

export interface FileRow {
  location: FileLocation;
  id: string;
  organization_id: string;
  workspace_id: string;
  filename: string;
  mime_type: string;
  /** bigint, which `pg` returns as a string. */
  size_bytes: string;
  blob_key: string | null;
  created_at: Date;
  /** `created_at` with its microseconds, for list cursors (a Date keeps milliseconds only). */
  cursor_at: string;
}

export type NewFileRow = Pick<FileRow, "location" | "id" | "filename" | "mime_type" | "blob_key"> & {
  size_bytes: number;
};

const COLUMNS = `*, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_at`;
const IN_SCOPE = "organization_id = :organizationId AND workspace_id = :workspaceId";

/**
 * A provider's id names the provider's file of now: a row left from a file deleted on the provider
 * directly is replaced. Own ids are random and never collide.
 */
export async function insertFileRow(sequelize: Sequelize, scope: WorkspaceScope, row: NewFileRow): Promise<FileRow> {
  const [inserted] = await sequelize.query<FileRow>(
    `INSERT INTO files (location, id, organization_id, workspace_id, filename, mime_type, size_bytes, blob_key)
     VALUES (:location, :id, :organizationId, :workspaceId, :filename, :mime_type, :size_bytes, :blob_key)
     ON CONFLICT (location, id) DO UPDATE SET
       organization_id = EXCLUDED.organization_id, workspace_id = EXCLUDED.workspace_id, filename = EXCLUDED.filename,
       mime_type = EXCLUDED.mime_type, size_bytes = EXCLUDED.size_bytes, created_at = now()
       WHERE files.location <> 'own'
     RETURNING ${COLUMNS}`,
    { type: QueryTypes.SELECT, replacements: { ...scope, ...row } },
  );
  return inserted!;
}

export async function findFileRow(
  sequelize: Sequelize,
  scope: WorkspaceScope,
  location: FileLocation,
  id: string,
): Promise<FileRow | undefined> {
  const [row] = await sequelize.query<FileRow>(
    `SELECT ${COLUMNS} FROM files WHERE location = :location AND id = :id AND ${IN_SCOPE}`,
    {
      type: QueryTypes.SELECT,
      replacements: { ...scope, location, id },
    },
  );
  return row;
}

/** Newest first; `after` is the (cursor_at, id) of the previous page's last row. */
export function listFileRows(
  sequelize: Sequelize,
  scope: WorkspaceScope,
  limit: number,
  after: [string, string] | undefined,
): Promise<FileRow[]> {
  return sequelize.query<FileRow>(
    `SELECT ${COLUMNS} FROM files
      WHERE location = 'own'
        AND ${IN_SCOPE} ${after ? "AND (created_at, id) < (CAST(:afterAt AS timestamptz), :afterId)" : ""}
      ORDER BY created_at DESC, id DESC
      LIMIT :limit`,
    {
      type: QueryTypes.SELECT,
      replacements: { ...scope, limit, afterAt: after?.[0] ?? null, afterId: after?.[1] ?? null },
    },
  );
}

/** Removes the row; the removed row, or undefined when there was none in scope. */
export async function deleteFileRow(
  sequelize: Sequelize,
  scope: WorkspaceScope,
  location: FileLocation,
  id: string,
): Promise<FileRow | undefined> {
  const [rows] = await sequelize.query(
    `DELETE FROM files WHERE location = :location AND id = :id AND ${IN_SCOPE} RETURNING ${COLUMNS}`,
    {
      replacements: { ...scope, location, id },
    },
  );
  return (rows as FileRow[])[0];
}

/** The rows the workspace keeps for these provider files, by id. */
export async function providerFileRows(
  sequelize: Sequelize,
  scope: WorkspaceScope,
  location: FileLocation,
  ids: string[],
): Promise<Map<string, FileRow>> {
  if (ids.length === 0) return new Map();
  const rows = await sequelize.query<FileRow>(
    `SELECT ${COLUMNS} FROM files WHERE location = :location AND id IN (:ids) AND ${IN_SCOPE}`,
    {
      type: QueryTypes.SELECT,
      replacements: { ...scope, location, ids },
    },
  );
  return new Map(rows.map((row) => [row.id, row]));
}
