/**
 * The SQL of authorization codes (auth-codes.ts): their apps, and the lock that keeps two pending
 * codes from sharing a challenge. The codes themselves are read and written as Sequelize models.
 *
 * @module
 */
import { QueryTypes, type Sequelize, type Transaction } from "sequelize";
import type { CallbackTarget } from "./callback-url.js";

/**
 * The app an authorization code is issued to: one row per organization and callback origin, its
 * number being the code's `app_id`. Found or created in one statement pair that concurrent requests
 * cannot split in two: the insert yields to an existing (or concurrently inserted) row through the
 * unique constraint, and the following read sees whichever row won.
 */
export async function appIdFor(
  sequelize: Sequelize,
  organizationId: string,
  target: CallbackTarget,
  transaction: Transaction,
): Promise<bigint> {
  const bind = [organizationId, target.origin, target.host];
  const inserted = await sequelize.query<{ id: string }>(
    `INSERT INTO auth_apps (organization_id, origin, name) VALUES ($1, $2, $3)
     ON CONFLICT ON CONSTRAINT auth_apps_origin_unique DO NOTHING
     RETURNING id`,
    { bind, type: QueryTypes.SELECT, transaction },
  );
  const existing = inserted[0]
    ? inserted
    : await sequelize.query<{ id: string }>("SELECT id FROM auth_apps WHERE organization_id = $1 AND origin = $2", {
        bind: bind.slice(0, 2),
        type: QueryTypes.SELECT,
        transaction,
      });
  const row = existing[0];
  // Apps are deleted only with their organization, which the caller's own key belongs to.
  if (!row) throw new Error("auth app vanished between insert and read");
  // BIGINT arrives from pg as a string; the proto field is int64.
  return BigInt(row.id);
}

/**
 * Serialises, until `transaction` ends, the requests of one organization carrying the same code
 * challenge, so that checking for a pending code and creating one cannot be raced.
 */
export async function lockCodeChallenge(
  sequelize: Sequelize,
  organizationId: string,
  codeChallenge: string,
  transaction: Transaction,
): Promise<void> {
  await sequelize.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", {
    bind: [`auth-code:${organizationId}:${codeChallenge}`],
    transaction,
  });
}
