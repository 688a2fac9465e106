import type { MigrationFn } from "umzug";
import type { QueryInterface } from "sequelize";

/**
 * Steering messages count as intern turns (GATEWAY_INTERN_TURNS_PER_MINUTE, 429
 * `rate_limited`) like prompts (`intern_runs.created_at`) and answers
 * (`intern_questions.answered_at`). A steer leaves nothing else in the database, so this table
 * only remembers when each one was taken; rows older than the limit's minute are pruned as new
 * ones come (server/services/interns/intern-store-runs.ts).
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE intern_steers (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      intern_id uuid NOT NULL REFERENCES interns (id) ON DELETE CASCADE,
      run_id uuid NOT NULL REFERENCES intern_runs (id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX intern_steers_turns ON intern_steers (intern_id, created_at);
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query("DROP TABLE intern_steers;");
};
