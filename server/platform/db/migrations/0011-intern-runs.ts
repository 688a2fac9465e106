import type { MigrationFn } from "umzug";
import type { QueryInterface } from "sequelize";

/**
 * Intern runtimes and chat runs (server/services/interns/host-manager.ts, intern-chat-*).
 * - `intern_hosts`: where the running host of an intern listens, written by the instance that
 *   started it, so any instance can relay to it. The token is sealed with the master key (the
 *   instances of one database share it); it never leaves the gateway in clear except to the host
 *   and to `GET /interns/{id}/daemon`.
 * - `intern_sessions`, `intern_runs`, `intern_questions`: what a reply needs to resume a paused run
 *   on any instance. At most one run per session is open (running or paused). A question remembers
 *   the position of its event in the run's output, where the resumed stream continues.
 */
export const up: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    CREATE TABLE intern_hosts (
      intern_id uuid PRIMARY KEY REFERENCES interns (id) ON DELETE CASCADE,
      origin text NOT NULL,
      sealed_token bytea NOT NULL,
      instance_id text NOT NULL,
      pid integer,
      started_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE intern_sessions (
      id text PRIMARY KEY,
      intern_id uuid NOT NULL REFERENCES interns (id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE intern_runs (
      id uuid PRIMARY KEY,
      session_id text NOT NULL REFERENCES intern_sessions (id) ON DELETE CASCADE,
      intern_id uuid NOT NULL REFERENCES interns (id) ON DELETE CASCADE,
      key_hash char(64) NOT NULL,
      approval_mode text NOT NULL CHECK (approval_mode IN ('manual', 'auto')),
      status text NOT NULL CHECK (status IN ('running', 'paused', 'completed', 'cancelled', 'ended', 'unknown')),
      usage jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      ended_at timestamptz
    );
    CREATE UNIQUE INDEX intern_runs_one_open_per_session ON intern_runs (session_id)
     WHERE status IN ('running', 'paused');
    CREATE INDEX intern_runs_turns ON intern_runs (intern_id, created_at);

    CREATE TABLE intern_questions (
      tool_call_id text PRIMARY KEY,
      run_id uuid NOT NULL REFERENCES intern_runs (id) ON DELETE CASCADE,
      session_id text NOT NULL,
      intern_id uuid NOT NULL,
      arguments text NOT NULL,
      event_seq integer NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'answered', 'closed')),
      asked_at timestamptz NOT NULL DEFAULT now(),
      deadline_at timestamptz NOT NULL,
      answered_at timestamptz
    );
    CREATE INDEX intern_questions_turns ON intern_questions (intern_id, answered_at) WHERE answered_at IS NOT NULL;
  `);
};

export const down: MigrationFn<QueryInterface> = async ({ context }) => {
  await context.sequelize.query(`
    DROP TABLE intern_questions;
    DROP TABLE intern_runs;
    DROP TABLE intern_sessions;
    DROP TABLE intern_hosts;
  `);
};
