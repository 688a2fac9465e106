import { randomBytes } from "node:crypto";
import { QueryTypes, type Sequelize, type Transaction } from "sequelize";
import type { ApprovalMode, RunUsage } from "./host/host-protocol.js";

/**
 * Sessions, runs and pending questions of the chat relay (migration 0011), in plain SQL. Whatever
 * a reply needs to resume a paused run is here, so the reply may land on any gateway instance.
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

export async function createSession(sequelize: Sequelize, internId: string): Promise<string> {
  const id = newSessionId();
  await sequelize.query("INSERT INTO intern_sessions (id, intern_id) VALUES (:id, :internId)", { replacements: { id, internId } });
  return id;
}

export async function sessionExists(sequelize: Sequelize, sessionId: string, internId: string): Promise<boolean> {
  const rows = await sequelize.query("SELECT 1 FROM intern_sessions WHERE id = :sessionId AND intern_id = :internId", { type: QueryTypes.SELECT, replacements: { sessionId, internId } });
  return rows.length > 0;
}

/** The session's open run (running, or paused on a question whose deadline has not passed). */
export async function openRunOf(sequelize: Sequelize, sessionId: string): Promise<RunRow | undefined> {
  const [run] = await sequelize.query<RunRow>("SELECT id, session_id, intern_id, status, approval_mode FROM intern_runs WHERE session_id = :sessionId AND status IN ('running', 'paused')", {
    type: QueryTypes.SELECT,
    replacements: { sessionId },
  });
  if (!run) return undefined;
  if (run.status === "paused" && (await deadlinePassed(sequelize, run.id))) {
    // The host cancelled it at the deadline; nobody was attached to hear it.
    await finishRun(sequelize, run.id, "cancelled", null);
    return undefined;
  }
  return run;
}

async function deadlinePassed(sequelize: Sequelize, runId: string): Promise<boolean> {
  const rows = await sequelize.query("SELECT 1 FROM intern_questions WHERE run_id = :runId AND status = 'pending' AND deadline_at <= now()", { type: QueryTypes.SELECT, replacements: { runId } });
  return rows.length > 0;
}

/** A new running run; false when the session has an open run already (the unique index decides). */
export async function insertRun(sequelize: Sequelize, run: { id: string; sessionId: string; internId: string; keyHash: string; approvalMode: ApprovalMode }): Promise<boolean> {
  const inserted = await sequelize.query(
    `INSERT INTO intern_runs (id, session_id, intern_id, key_hash, approval_mode, status)
     VALUES (:id, :sessionId, :internId, :keyHash, :approvalMode, 'running')
     ON CONFLICT (session_id) WHERE status IN ('running', 'paused') DO NOTHING
     RETURNING id`,
    { type: QueryTypes.SELECT, replacements: run },
  );
  return inserted.length === 1;
}

/** The run paused on a question; stored before the question reaches the client (a replayed one is kept as it was). */
export async function recordQuestion(
  sequelize: Sequelize,
  question: { toolCallId: string; runId: string; sessionId: string; internId: string; arguments: string; seq: number; deadlineAt: Date },
): Promise<void> {
  await sequelize.transaction(async (transaction) => {
    await sequelize.query(
      `INSERT INTO intern_questions (tool_call_id, run_id, session_id, intern_id, arguments, event_seq, status, deadline_at)
       VALUES (:toolCallId, :runId, :sessionId, :internId, :arguments, :seq, 'pending', :deadlineAt)
       ON CONFLICT (tool_call_id) DO NOTHING`,
      { replacements: question, transaction },
    );
    await sequelize.query("UPDATE intern_runs SET status = 'paused' WHERE id = :runId AND status = 'running'", { replacements: question, transaction });
  });
}

export async function findQuestion(sequelize: Sequelize, toolCallId: string, sessionId: string): Promise<QuestionRow | undefined> {
  const [row] = await sequelize.query<QuestionRow>(
    `SELECT q.tool_call_id, q.run_id, q.session_id, q.status, q.event_seq, q.deadline_at, r.status AS run_status
       FROM intern_questions q JOIN intern_runs r ON r.id = q.run_id
      WHERE q.tool_call_id = :toolCallId AND q.session_id = :sessionId`,
    { type: QueryTypes.SELECT, replacements: { toolCallId, sessionId } },
  );
  return row;
}

/** The answer was delivered: the question is done and the run runs again. */
export async function markAnswered(sequelize: Sequelize, question: QuestionRow): Promise<void> {
  await sequelize.transaction(async (transaction) => {
    await sequelize.query("UPDATE intern_questions SET status = 'answered', answered_at = now() WHERE tool_call_id = :id AND status = 'pending'", {
      replacements: { id: question.tool_call_id },
      transaction,
    });
    await sequelize.query("UPDATE intern_runs SET status = 'running' WHERE id = :runId AND status = 'paused'", { replacements: { runId: question.run_id }, transaction });
  });
}

/** Ends an open run; its unanswered questions are no longer pending. */
export async function finishRun(sequelize: Sequelize, runId: string, status: Exclude<RunStatus, "running" | "paused">, usage: RunUsage | null): Promise<void> {
  await sequelize.transaction(async (transaction) => {
    await sequelize.query("UPDATE intern_runs SET status = :status, usage = :usage, ended_at = now() WHERE id = :runId AND status IN ('running', 'paused')", {
      replacements: { runId, status, usage: usage ? JSON.stringify(usage) : null },
      transaction,
    });
    await sequelize.query("UPDATE intern_questions SET status = 'closed' WHERE run_id = :runId AND status = 'pending'", { replacements: { runId }, transaction });
  });
}

/** Ends every open run of the intern: its host is gone or stopped, and the runs with it. */
export async function endOpenRuns(sequelize: Sequelize, internId: string, transaction: Transaction): Promise<void> {
  await sequelize.query("UPDATE intern_runs SET status = 'ended', ended_at = now() WHERE intern_id = :internId AND status IN ('running', 'paused')", {
    replacements: { internId },
    transaction,
  });
  await sequelize.query("UPDATE intern_questions SET status = 'closed' WHERE intern_id = :internId AND status = 'pending'", { replacements: { internId }, transaction });
}

/** Prompts and answers of the intern in the last minute, on every instance. */
export async function turnsInLastMinute(sequelize: Sequelize, internId: string): Promise<number> {
  const [row] = await sequelize.query<{ turns: string }>(
    `SELECT (SELECT count(*) FROM intern_runs WHERE intern_id = :internId AND created_at > now() - interval '1 minute')
          + (SELECT count(*) FROM intern_questions WHERE intern_id = :internId AND answered_at > now() - interval '1 minute') AS turns`,
    { type: QueryTypes.SELECT, replacements: { internId } },
  );
  return Number(row?.turns ?? 0);
}
