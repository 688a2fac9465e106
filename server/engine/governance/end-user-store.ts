import { QueryTypes, type Sequelize } from "sequelize";

/**
 * The SQL of end users. The API's reads and writes are Sequelize model calls (end-users-service.ts);
 * registration from an inference call is one conditional upsert: a new end user is active, one
 * already registered only has its `updated_at` touched (an inactive one stays inactive).
 */
export async function registerEndUser(sequelize: Sequelize, organizationId: string, user: string): Promise<void> {
  await sequelize.query(
    `INSERT INTO end_users (organization_id, "user", is_active, created_at, updated_at)
     VALUES (:organizationId, :user, true, now(), now())
     ON CONFLICT (organization_id, "user") DO UPDATE SET updated_at = now()`,
    { type: QueryTypes.INSERT, replacements: { organizationId, user } },
  );
}
