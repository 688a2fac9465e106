import type { MigrationFn } from "umzug";
import type { QueryInterface } from "sequelize";

/**
 * Who keeps an intern's runtime (server/services/interns/intern-supervisor.ts). An intern that should have
 * a host (`provisioning`, `running`) or is being torn down (`destroying`) is leased by the gateway
 * instance doing that work, which renews the lease while it lives. When the lease lapses (the
 * instance crashed or stopped, or gave the intern up because its host exited), any instance takes
 * the intern over and finishes the work: it boots a new host, or completes the teardown.
 * `recoveries` counts restarts within a short window, so a host that keeps dying ends `failed`
 * instead of being restarted forever. Rows that predate this have no lease and are taken over at
 * once.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    ALTER TABLE interns
      ADD COLUMN runtime_owner text,
      ADD COLUMN runtime_lease_until timestamptz,
      ADD COLUMN recoveries integer NOT NULL DEFAULT 0,
      ADD COLUMN recovered_at timestamptz;
    CREATE INDEX interns_runtime_leases ON interns (runtime_lease_until NULLS FIRST)
     WHERE status IN ('provisioning', 'running', 'destroying');
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    DROP INDEX interns_runtime_leases;
    ALTER TABLE interns DROP COLUMN runtime_owner, DROP COLUMN runtime_lease_until, DROP COLUMN recoveries,
      DROP COLUMN recovered_at;
  `);
};
