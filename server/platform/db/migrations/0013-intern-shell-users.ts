import type { MigrationFn } from "umzug";
import type { QueryInterface } from "sequelize";

/**
 * Each intern's number for its own OS user: a gateway running as root runs an intern's shell as
 * uid GATEWAY_INTERN_SHELL_UID_BASE + shell_number (server/services/interns/intern-home.ts), so that one
 * intern's commands can read neither the gateway's secrets nor another intern's files. Stable for
 * the intern's life, never reused (an identity), valid on every instance of the database.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    ALTER TABLE interns ADD COLUMN shell_number integer GENERATED ALWAYS AS IDENTITY UNIQUE;
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query("ALTER TABLE interns DROP COLUMN shell_number;");
};
