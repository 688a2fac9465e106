import { randomUUID } from "node:crypto";
import { QueryTypes, type Sequelize, type Transaction } from "sequelize";
import type { Page } from "../../../platform/rpc/pagination.js";
import type { WorkspaceScope } from "../../../platform/rpc/scope.js";
import { fingerprintOf, newSealedDataKey, openDataKey, openValue, sealValue, type VaultKey } from "./vault-keys.js";

/**
 * Vaults and their secrets (migration 0010) in plain SQL. A workspace's vault comes into being
 * with its first secret, an intern's with the intern. Storing a name replaces the current secret of
 * that name and any legacy row under it; lists show one entry per name, the current one before a
 * legacy one. Values leave this file only through `openValue`, i.e. for the copy and for release.
 */
export interface SecretMeta {
  name: string;
  hosts: string[] | null;
  fingerprint: string | null;
  createdAt: Date;
  /** Released to http URLs too; otherwise to https URLs only. */
  allowHttp: boolean;
}

export type EffectiveScope = "intern" | "attached" | "workspace";

export interface EffectiveMeta extends SecretMeta {
  scope: EffectiveScope;
}

interface StoredSecret {
  name: string;
  hosts: string[] | null;
  fingerprint: string | null;
  created_at: Date;
  allow_http: boolean;
}

const toMeta = (row: StoredSecret): SecretMeta => ({
  name: row.name,
  hosts: row.hosts,
  fingerprint: row.fingerprint,
  createdAt: row.created_at,
  allowHttp: row.allow_http,
});

export async function createInternVault(
  sequelize: Sequelize,
  masterKey: Buffer,
  owner: WorkspaceScope & { internId: string },
  transaction: Transaction,
): Promise<string> {
  const id = randomUUID();
  await sequelize.query(
    "INSERT INTO vaults (id, organization_id, workspace_id, intern_id, sealed_data_key) " +
      "VALUES (:id, :organizationId, :workspaceId, :internId, :sealed)",
    {
      replacements: { id, ...owner, sealed: newSealedDataKey(masterKey, id) },
      transaction,
    },
  );
  return id;
}

/** The workspace's vault id; with `create`, made on first use (two concurrent first writes agree on one). */
export async function workspaceVaultId(
  sequelize: Sequelize,
  masterKey: Buffer,
  owner: WorkspaceScope,
  options: { create: boolean; transaction?: Transaction },
): Promise<string | undefined> {
  const find = async () => {
    const [row] = await sequelize.query<{ id: string }>(
      "SELECT id FROM vaults WHERE workspace_id = :workspaceId AND intern_id IS NULL",
      {
        type: QueryTypes.SELECT,
        replacements: { ...owner },
        transaction: options.transaction,
      },
    );
    return row?.id;
  };
  const existing = await find();
  if (existing || !options.create) return existing;
  const id = randomUUID();
  await sequelize.query(
    `INSERT INTO vaults (id, organization_id, workspace_id, sealed_data_key)
     VALUES (:id, :organizationId, :workspaceId, :sealed)
     ON CONFLICT (workspace_id) WHERE intern_id IS NULL DO NOTHING`,
    { replacements: { id, ...owner, sealed: newSealedDataKey(masterKey, id) }, transaction: options.transaction },
  );
  return find();
}

/**
 * The vault's data key, or undefined when the vault is gone (an intern's vault goes with the
 * intern). In a transaction the vault row is held FOR SHARE until it ends: a delete of the vault
 * then waits for the writes made with this key instead of landing between the read and a write,
 * whose foreign key would fail.
 */
export async function vaultKey(
  sequelize: Sequelize,
  masterKey: Buffer,
  vaultId: string,
  transaction?: Transaction,
): Promise<VaultKey | undefined> {
  const [row] = await sequelize.query<{ sealed_data_key: Buffer }>(
    `SELECT sealed_data_key FROM vaults WHERE id = :vaultId${transaction ? " FOR SHARE" : ""}`,
    {
      type: QueryTypes.SELECT,
      replacements: { vaultId },
      transaction,
    },
  );
  return row ? openDataKey(masterKey, vaultId, row.sealed_data_key) : undefined;
}

/** Creates or replaces the current secret `name` (and drops a legacy row of that name). */
export async function putSecret(
  sequelize: Sequelize,
  key: VaultKey,
  secret: { name: string; hosts: string[]; value: string; allowHttp: boolean },
  transaction?: Transaction,
): Promise<SecretMeta> {
  const replacements = {
    vaultId: key.vaultId,
    name: secret.name,
    hosts: secret.hosts,
    allowHttp: secret.allowHttp,
    fingerprint: fingerprintOf(key, secret.value),
    sealed: sealValue(key, secret.name, secret.value),
  };
  const write = async (t: Transaction) => {
    await sequelize.query("DELETE FROM vault_secrets WHERE vault_id = :vaultId AND name = :name AND legacy", {
      replacements,
      transaction: t,
    });
    const [rows] = (await sequelize.query(
      `INSERT INTO vault_secrets (vault_id, name, legacy, hosts, fingerprint, sealed_value, allow_http)
       VALUES (:vaultId, :name, false, ARRAY[:hosts]::text[], :fingerprint, :sealed, :allowHttp)
       ON CONFLICT (vault_id, name, legacy) DO UPDATE SET hosts = EXCLUDED.hosts, fingerprint = EXCLUDED.fingerprint,
         sealed_value = EXCLUDED.sealed_value, allow_http = EXCLUDED.allow_http, created_at = now()
       RETURNING name, hosts, fingerprint, created_at, allow_http`,
      { replacements, transaction: t },
    )) as [StoredSecret[], unknown];
    return toMeta(rows[0]!);
  };
  return transaction ? write(transaction) : sequelize.transaction(write);
}

/**
 * A secret as the dashboard or a provisioning import stored it before host-bound storage: no
 * hosts, no fingerprint. Not reachable through the API; only tests write them (no import path
 * exists yet).
 */
export async function importLegacySecret(
  sequelize: Sequelize,
  key: VaultKey,
  name: string,
  value: string,
): Promise<void> {
  await sequelize.query(
    `INSERT INTO vault_secrets (vault_id, name, legacy, sealed_value) VALUES (:vaultId, :name, true, :sealed)
     ON CONFLICT (vault_id, name, legacy) DO UPDATE SET sealed_value = EXCLUDED.sealed_value`,
    { replacements: { vaultId: key.vaultId, name, sealed: sealValue(key, name, value) } },
  );
}

/** One entry per name, ordered by name: the current secret, else the legacy one. */
export async function listSecrets(
  sequelize: Sequelize,
  vaultId: string | undefined,
  page: Page,
): Promise<{ data: SecretMeta[]; hasMore: boolean }> {
  if (!vaultId) return { data: [], hasMore: false };
  const rows = await sequelize.query<StoredSecret>(
    `SELECT name, hosts, fingerprint, created_at, allow_http FROM (
       SELECT DISTINCT ON (name) name, hosts, fingerprint, created_at, allow_http FROM vault_secrets
        WHERE vault_id = :vaultId ORDER BY name, legacy
     ) named
     ORDER BY name LIMIT :limit OFFSET :offset`,
    { type: QueryTypes.SELECT, replacements: { vaultId, limit: page.limit + 1, offset: page.offset } },
  );
  return { data: rows.slice(0, page.limit).map(toMeta), hasMore: rows.length > page.limit };
}

export type DeleteOutcome = "deleted" | "legacy_only" | "missing";

/** Deletes the current secret `name`; a legacy row is never deleted here. */
export async function deleteSecret(
  sequelize: Sequelize,
  vaultId: string | undefined,
  name: string,
): Promise<DeleteOutcome> {
  if (!vaultId) return "missing";
  const [rows] = (await sequelize.query(
    "DELETE FROM vault_secrets WHERE vault_id = :vaultId AND name = :name AND NOT legacy RETURNING name",
    {
      replacements: { vaultId, name },
    },
  )) as [unknown[], unknown];
  if (rows.length > 0) return "deleted";
  const [legacy] = await sequelize.query("SELECT 1 FROM vault_secrets WHERE vault_id = :vaultId AND name = :name", {
    type: QueryTypes.SELECT,
    replacements: { vaultId, name },
  });
  return legacy ? "legacy_only" : "missing";
}

export interface SealedSecret extends SecretMeta {
  legacy: boolean;
  vaultId: string;
  sealedValue: Buffer;
}

interface StoredSealed extends StoredSecret {
  legacy: boolean;
  vault_id: string;
  sealed_value: Buffer;
}

/** The secrets `names` of one vault as stored (current before legacy), by name. */
export async function sealedSecrets(
  sequelize: Sequelize,
  vaultId: string | undefined,
  names: readonly string[],
  transaction?: Transaction,
): Promise<Map<string, SealedSecret>> {
  if (!vaultId || names.length === 0) return new Map();
  const rows = await sequelize.query<StoredSealed>(
    `SELECT DISTINCT ON (name) name, hosts, fingerprint, created_at, allow_http, legacy, vault_id, sealed_value
       FROM vault_secrets WHERE vault_id = :vaultId AND name IN (:names) ORDER BY name, legacy`,
    { type: QueryTypes.SELECT, replacements: { vaultId, names }, transaction },
  );
  return new Map(
    rows.map((row) => [
      row.name,
      { ...toMeta(row), legacy: row.legacy, vaultId: row.vault_id, sealedValue: row.sealed_value },
    ]),
  );
}

export function openSealed(key: VaultKey, secret: SealedSecret): string {
  return openValue(key, secret.name, secret.sealedValue);
}

/** The vaults an intern's requests draw from, most specific first (the intern's own wins; docs/api/vault.md). */
export interface InternVaults {
  own: string | null;
  attached: string | null;
  workspaceId: string;
}

interface StoredEffective extends StoredSealed {
  scope: EffectiveScope;
  sealed_data_key: Buffer;
}

const EFFECTIVE_SQL = `
  WITH sources (vault_id, rank, scope) AS (
    SELECT CAST(:own AS uuid), 1, 'intern'
    UNION ALL SELECT CAST(:attached AS uuid), 2, 'attached'
    UNION ALL SELECT id, 3, 'workspace' FROM vaults WHERE workspace_id = :workspaceId AND intern_id IS NULL
  )
  SELECT DISTINCT ON (s.name) s.name, s.hosts, s.fingerprint, s.created_at, s.allow_http, s.legacy, s.vault_id,
         s.sealed_value, o.scope, v.sealed_data_key
    FROM sources o
    JOIN vault_secrets s ON s.vault_id = o.vault_id
    JOIN vaults v ON v.id = s.vault_id
   ORDER BY s.name, o.rank, s.legacy`;

/** One entry per name: the secret an intern's request receives under that name. */
export async function effectiveSecrets(
  sequelize: Sequelize,
  vaults: InternVaults,
  page: Page,
): Promise<{ data: EffectiveMeta[]; hasMore: boolean }> {
  const rows = await sequelize.query<StoredEffective>(
    `SELECT * FROM (${EFFECTIVE_SQL}) effective ORDER BY name LIMIT :limit OFFSET :offset`,
    {
      type: QueryTypes.SELECT,
      replacements: { ...vaults, limit: page.limit + 1, offset: page.offset },
    },
  );
  return {
    data: rows.slice(0, page.limit).map((row) => ({ ...toMeta(row), scope: row.scope })),
    hasMore: rows.length > page.limit,
  };
}

/**
 * The effective secrets bound to exactly `host`, opened; for a request over http only those that
 * allow it. Names are resolved first and hosts matched after, so a more specific secret that is
 * bound elsewhere (or https-only) hides a broader one of the same name rather than letting it
 * through. Legacy rows have no hosts and never match.
 */
export async function releasableSecrets(
  sequelize: Sequelize,
  masterKey: Buffer,
  vaults: InternVaults,
  request: { host: string; https: boolean },
): Promise<Array<{ name: string; value: string }>> {
  const rows = await sequelize.query<StoredEffective>(
    `SELECT * FROM (${EFFECTIVE_SQL}) effective WHERE :host = ANY(hosts) AND (:https OR allow_http) ORDER BY name`,
    {
      type: QueryTypes.SELECT,
      replacements: { ...vaults, ...request },
    },
  );
  return rows.map((row) => {
    const key = openDataKey(masterKey, row.vault_id, row.sealed_data_key);
    return { name: row.name, value: openValue(key, row.name, row.sealed_value) };
  });
}

/** Whether `vaultId` is the vault of an intern of this workspace (the `vault_id` an intern may borrow). */
export async function isInternVaultOf(
  sequelize: Sequelize,
  owner: WorkspaceScope,
  vaultId: string,
  transaction?: Transaction,
): Promise<boolean> {
  const [row] = await sequelize.query(
    "SELECT 1 FROM vaults WHERE id = :vaultId AND organization_id = :organizationId " +
      "AND workspace_id = :workspaceId AND intern_id IS NOT NULL",
    {
      type: QueryTypes.SELECT,
      replacements: { vaultId, ...owner },
      transaction,
    },
  );
  return row !== undefined;
}
