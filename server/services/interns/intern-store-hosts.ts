import { QueryTypes, type Sequelize } from "sequelize";

/**
 * Where interns' hosts run (`intern_hosts`, migration 0011), so that every instance on the
 * database can relay to a host another one started, and the record of each reveal of a host's
 * access (`intern_daemon_reveals`, migration 0009). Tokens are stored sealed; host-manager.ts seals and opens them.
 */
export interface HostRegistration {
  internId: string;
  origin: string;
  sealedToken: Buffer;
  /** The gateway instance whose child process the host is. */
  instanceId: string;
  pid: number | null;
}

/** The intern's host from now on; a row left by an earlier host is replaced. */
export async function registerHost(sequelize: Sequelize, host: HostRegistration): Promise<void> {
  await sequelize.query(
    `INSERT INTO intern_hosts (intern_id, origin, sealed_token, instance_id, pid)
     VALUES (:internId, :origin, :sealed, :instanceId, :pid)
     ON CONFLICT (intern_id) DO UPDATE SET origin = EXCLUDED.origin, sealed_token = EXCLUDED.sealed_token,
       instance_id = EXCLUDED.instance_id, pid = EXCLUDED.pid, started_at = now()`,
    {
      replacements: {
        internId: host.internId,
        origin: host.origin,
        sealed: host.sealedToken,
        instanceId: host.instanceId,
        pid: host.pid,
      },
    },
  );
}

/** Removes the row of this host process only: a newer host of the intern keeps its row. */
export async function unregisterHost(
  sequelize: Sequelize,
  host: Pick<HostRegistration, "internId" | "instanceId" | "pid">,
): Promise<void> {
  await sequelize.query(
    "DELETE FROM intern_hosts WHERE intern_id = :internId AND instance_id = :instanceId AND pid = :pid",
    {
      replacements: { internId: host.internId, instanceId: host.instanceId, pid: host.pid },
    },
  );
}

/** Removes the intern's host row, whichever process it names. */
export async function deleteHost(sequelize: Sequelize, internId: string): Promise<void> {
  await sequelize.query("DELETE FROM intern_hosts WHERE intern_id = :internId", { replacements: { internId } });
}

export async function recordedHost(
  sequelize: Sequelize,
  internId: string,
): Promise<{ origin: string; sealed_token: Buffer } | undefined> {
  const [row] = await sequelize.query<{ origin: string; sealed_token: Buffer }>(
    "SELECT origin, sealed_token FROM intern_hosts WHERE intern_id = :internId",
    {
      type: QueryTypes.SELECT,
      replacements: { internId },
    },
  );
  return row;
}

/** Who was shown a host's access, and when (never the token). */
export async function recordDaemonReveal(
  sequelize: Sequelize,
  reveal: { organizationId: string; workspaceId: string; internId: string; keyHash: string },
): Promise<void> {
  await sequelize.query(
    "INSERT INTO intern_daemon_reveals (organization_id, workspace_id, intern_id, caller_key_hash) " +
      "VALUES (:organizationId, :workspaceId, :internId, :keyHash)",
    {
      replacements: { ...reveal },
    },
  );
}
