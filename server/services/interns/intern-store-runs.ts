import { randomBytes } from "node:crypto";
import { QueryTypes, type Sequelize, type Transaction } from "sequelize";
import type { ApprovalMode, RunUsage } from "../../../wire/host-protocol.js";

/**
 * Sessions, runs and pending questions of the chat relay (migration 0011), and the steers counted
 * as turns (0014), in plain SQL. Whatever a reply needs to resume a paused run is here, so the
 * reply may land on any gateway instance.
 */
export type RunStatus = "running" | "paused" | "completed" | "cancelled" | "ended" | "unknown";

export interface RunRow {
  id: string;
  session_id: string;
  intern_id: string;
  status: RunStatus;
  approval_mode: ApprovalMode;
}

export interface QuestionRow {
  tool_call_id: string;
  run_id: string;
  session_id: string;
  status: "pending" | "answered" | "closed";
  event_seq: number;
  deadline_at: Date;
  run_status: RunStatus;
}

export function newSessionId(): string {
  return `sess_${randomBytes(16).toString("hex")}`;
}

export async function sessionExists(sequelize: Sequelize, sessionId: string, internId: string): Promise<boolean> {
  const rows = await sequelize.query("SELECT 1 FROM intern_sessions WHERE id = :sessionId AND intern_id = :internId", {
    type: QueryTypes.SELECT,
    replacements: { sessionId, internId },
  });
  return rows.length > 0;
}

/**
 * Runs `take` (which records one turn: a run, an answer, a steer) in a transaction, unless the
 * intern has had `limit` turns in the last minute (0: no limit); "limited" then. The count and
 * the new turn are serialized per intern by an advisory lock, so concurrent requests on any
 * instance cannot together overshoot the limit.
 */
export async function withinTurnLimit<T>(
  sequelize: Sequelize,
  internId: string,
  limit: number,
  take: (transaction: Transaction) => Promise<T>,
): Promise<{ taken: T } | "limited"> {
  return sequelize.transaction(async (transaction) => {
    if (limit > 0) {
      await sequelize.query("SELECT pg_advisory_xact_lock(hashtextextended('intern-turns:' || :internId, 0))", {
        replacements: { internId },
        transaction,
      });
      if ((await turnsInLastMinute(sequelize, internId, transaction)) >= limit) return "limited" as const;
    }
    return { taken: await take(transaction) };
  });
}

/** Prompts, answers and steers of the intern in the last minute, on every instance. */
async function turnsInLastMinute(sequelize: Sequelize, internId: string, transaction: Transaction): Promise<number> {
  const [row] = await sequelize.query<{ turns: string }>(
    `SELECT (SELECT count(*) FROM intern_runs WHERE intern_id = :internId AND created_at > now() - interval '1 minute')
          + (SELECT count(*) FROM intern_questions
              WHERE intern_id = :internId AND answered_at > now() - interval '1 minute')
          + (SELECT count(*) FROM intern_steers
              WHERE intern_id = :internId AND created_at > now() - interval '1 minute') AS turns`,
    { type: QueryTypes.SELECT, replacements: { internId }, transaction },
  );
  return Number(row?.turns ?? 0);
}

/** The session's open run (running, or paused on a question whose deadline has not passed). */
export async function openRunOf(sequelize: Sequelize, sessionId: string): Promise<RunRow | undefined> {
  const [run] = await sequelize.query<RunRow>(
    "SELECT id, session_id, intern_id, status, approval_mode FROM intern_runs " +
      "WHERE session_id = :sessionId AND status IN ('running', 'paused')",
    {
      type: QueryTypes.SELECT,
      replacements: { sessionId },
    },
  );
  if (!run) return undefined;
  if (run.status === "paused" && (await deadlinePassed(sequelize, run.id))) {
    // The host cancelled it at the deadline; nobody was attached to hear it.
    await finishRun(sequelize, run.id, "cancelled", null);
    return undefined;
  }
  return run;
}

async function deadlinePassed(sequelize: Sequelize, runId: string): Promise<boolean> {
  const rows = await sequelize.query(
    "SELECT 1 FROM intern_questions WHERE run_id = :runId AND status = 'pending' AND deadline_at <= now()",
    { type: QueryTypes.SELECT, replacements: { runId } },
  );
  return rows.length > 0;
}

/**
 * A new running run, in a new session when `newSession`; false when the session has an open run
 * already (the unique index decides).
 */
export async function insertRun(
  sequelize: Sequelize,
  run: {
    id: string;
    sessionId: string;
    newSession: boolean;
    internId: string;
    keyHash: string;
    approvalMode: ApprovalMode;
  },
  transaction: Transaction,
): Promise<boolean> {
  if (run.newSession)
    await sequelize.query("INSERT INTO intern_sessions (id, intern_id) VALUES (:sessionId, :internId)", {
      replacements: run,
      transaction,
    });
  const inserted = await sequelize.query(
    `INSERT INTO intern_runs (id, session_id, intern_id, key_hash, approval_mode, status)
     VALUES (:id, :sessionId, :internId, :keyHash, :approvalMode, 'running')
     ON CONFLICT (session_id) WHERE status IN ('running', 'paused') DO NOTHING
     RETURNING id`,
    { type: QueryTypes.SELECT, replacements: run, transaction },
  );
  return inserted.length === 1;
}

/**
 * Forgets a run the host never started (it refused it or could not be asked): it was no turn,
 * and a session made for it leaves no row.
 */
export async function discardRun(
  sequelize: Sequelize,
  run: { id: string; sessionId: string; newSession: boolean },
): Promise<void> {
  if (run.newSession) await sequelize.query("DELETE FROM intern_sessions WHERE id = :sessionId", { replacements: run });
  else await sequelize.query("DELETE FROM intern_runs WHERE id = :id", { replacements: run });
}

/** A steering message for the run, counted as a turn; the steers that no longer count are pruned. */
export async function recordSteer(sequelize: Sequelize, run: RunRow, transaction: Transaction): Promise<string> {
  const replacements = { internId: run.intern_id, runId: run.id };
  await sequelize.query(
    "DELETE FROM intern_steers WHERE intern_id = :internId AND created_at <= now() - interval '1 minute'",
    { replacements, transaction },
  );
  const [row] = await sequelize.query<{ id: string }>(
    "INSERT INTO intern_steers (intern_id, run_id) VALUES (:internId, :runId) RETURNING id",
    { type: QueryTypes.SELECT, replacements, transaction },
  );
  return row!.id;
}

/** A steer the run did not take is no turn. */
export async function forgetSteer(sequelize: Sequelize, steerId: string): Promise<void> {
  await sequelize.query("DELETE FROM intern_steers WHERE id = :steerId", { replacements: { steerId } });
}

/** The run paused on a question; stored before the question reaches the client (a replayed one is kept as it was). */
export async function recordQuestion(
  sequelize: Sequelize,
  question: {
    toolCallId: string;
    runId: string;
    sessionId: string;
    internId: string;
    arguments: string;
    seq: number;
    deadlineAt: Date;
  },
): Promise<void> {
  await sequelize.transaction(async (transaction) => {
    await sequelize.query(
      `INSERT INTO intern_questions (tool_call_id, run_id, session_id, intern_id, arguments, event_seq, status,
                                     deadline_at)
       VALUES (:toolCallId, :runId, :sessionId, :internId, :arguments, :seq, 'pending', :deadlineAt)
       ON CONFLICT (tool_call_id) DO NOTHING`,
      { replacements: question, transaction },
    );
    await sequelize.query("UPDATE intern_runs SET status = 'paused' WHERE id = :runId AND status = 'running'", {
      replacements: question,
      transaction,
    });
  });
}

export async function findQuestion(
  sequelize: Sequelize,
  toolCallId: string,
  sessionId: string,
): Promise<QuestionRow | undefined> {
  const [row] = await sequelize.query<QuestionRow>(
    `SELECT q.tool_call_id, q.run_id, q.session_id, q.status, q.event_seq, q.deadline_at, r.status AS run_status
       FROM intern_questions q JOIN intern_runs r ON r.id = q.run_id
      WHERE q.tool_call_id = :toolCallId AND q.session_id = :sessionId`,
    { type: QueryTypes.SELECT, replacements: { toolCallId, sessionId } },
  );
  return row;
}

/**
 * Takes the question for one reply before its answer goes to the host: of replies racing on any
 * instance, exactly one finds it pending (false for the others). The question is answered and the
 * run runs again from here; `releaseQuestion` undoes it when the answer was not delivered.
 */
export async function claimQuestion(
  sequelize: Sequelize,
  question: QuestionRow,
  transaction: Transaction,
): Promise<boolean> {
  const claimed = await sequelize.query(
    `UPDATE intern_questions SET status = 'answered', answered_at = now()
      WHERE tool_call_id = :id AND session_id = :sessionId AND status = 'pending' AND deadline_at > now()
      RETURNING tool_call_id`,
    {
      type: QueryTypes.SELECT,
      replacements: { id: question.tool_call_id, sessionId: question.session_id },
      transaction,
    },
  );
  if (claimed.length === 0) return false;
  await sequelize.query("UPDATE intern_runs SET status = 'running' WHERE id = :runId AND status = 'paused'", {
    replacements: { runId: question.run_id },
    transaction,
  });
  return true;
}

/** The claimed answer did not reach the run (refused, or the host could not be asked): pending again, no turn. */
export async function releaseQuestion(sequelize: Sequelize, question: QuestionRow): Promise<void> {
  await sequelize.transaction(async (transaction) => {
    await sequelize.query(
      "UPDATE intern_questions SET status = 'pending', answered_at = NULL " +
        "WHERE tool_call_id = :id AND status = 'answered'",
      {
        replacements: { id: question.tool_call_id },
        transaction,
      },
    );
    await sequelize.query("UPDATE intern_runs SET status = 'paused' WHERE id = :runId AND status = 'running'", {
      replacements: { runId: question.run_id },
      transaction,
    });
  });
}

/** Ends an open run; its unanswered questions are no longer pending. */
export async function finishRun(
  sequelize: Sequelize,
  runId: string,
  status: Exclude<RunStatus, "running" | "paused">,
  usage: RunUsage | null,
): Promise<void> {
  await sequelize.transaction(async (transaction) => {
    await sequelize.query(
      "UPDATE intern_runs SET status = :status, usage = :usage, ended_at = now() " +
        "WHERE id = :runId AND status IN ('running', 'paused')",
      {
        replacements: { runId, status, usage: usage ? JSON.stringify(usage) : null },
        transaction,
      },
    );
    await sequelize.query(
      "UPDATE intern_questions SET status = 'closed' WHERE run_id = :runId AND status = 'pending'",
      { replacements: { runId }, transaction },
    );
  });
}

/** Ends every open run of the intern: its host is gone or stopped, and the runs with it. */
export async function endOpenRuns(sequelize: Sequelize, internId: string, transaction: Transaction): Promise<void> {
  await sequelize.query(
    "UPDATE intern_runs SET status = 'ended', ended_at = now() " +
      "WHERE intern_id = :internId AND status IN ('running', 'paused')",
    {
      replacements: { internId },
      transaction,
    },
  );
  await sequelize.query(
    "UPDATE intern_questions SET status = 'closed' WHERE intern_id = :internId AND status = 'pending'",
    { replacements: { internId }, transaction },
  );
}
