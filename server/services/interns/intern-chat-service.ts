/**
 * `POST /interns/{internId}/chat/completions` (docs/api/interns.md): the relay between a client
 * and the run on the intern's host. services.ts merges it beside the record methods.
 * A prompt starts a run in a new session or the given one; a prompt to a session whose run is
 * open (running or paused) steers it instead and answers {session_id, status: steered}. A reply
 * answers the pending question and continues the run's stream from the pause. Whatever decides a
 * reply is in Postgres, so any instance can take it.
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ConnectError, HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { Transaction } from "sequelize";
import type { InternsService } from "../../../gen/gateway/v1/interns_pb.js";
import {
  InternReplyStatus,
  type InternChatEventSchema,
  type InternChatRequest,
} from "../../../gen/gateway/v1/intern_chat_pb.js";
import { callerOf, type Caller } from "../../platform/rpc/auth.js";
import { gatewayError } from "../../../wire/errors.js";
import type { Deps } from "../deps.js";
import { isMember } from "../members/member-store.js";
import { internChatError, type InternChatReason } from "./intern-chat-errors.js";
import { relayRun } from "./intern-chat-relay.js";
import { chatTurnOf, type ChatTurn } from "./intern-chat-request.js";
import { HostCallError, hostCall, hostStream, isReply, type HostEvents, type HostReply } from "./intern-host-client.js";
import type { InternHostAccess } from "./intern-hosts.js";
import { requireVisibleIntern } from "./intern-scope.js";
import type { InternRow } from "./intern-store.js";
import {
  claimQuestion,
  discardRun,
  findQuestion,
  finishRun,
  forgetSteer,
  insertRun,
  newSessionId,
  openRunOf,
  recordSteer,
  releaseQuestion,
  sessionExists,
  withinTurnLimit,
  type QuestionRow,
  type RunRow,
} from "./intern-store-runs.js";

type ChatEvent = MessageInitShape<typeof InternChatEventSchema>;

export function internChatService(deps: Deps): Pick<ServiceImpl<typeof InternsService>, "chatCompletions"> {
  const { sequelize, log, config } = deps;
  const limits = config.internRuntime;

  async function* chat(req: InternChatRequest, ctx: HandlerContext): AsyncGenerator<ChatEvent> {
    const caller = callerOf(ctx);
    const turn = chatTurnOf(req);
    const intern = await requireVisibleIntern(sequelize, caller, req.internId);
    await requireCreatorsInOrganization(caller, intern);
    if (intern.status !== "running")
      throw internChatError(409, "intern_not_running", `Intern ${intern.id} is ${intern.status}, not running`);
    const access = await deps.internHosts.recorded(intern.id);
    if (!access)
      throw internChatError(502, "intern_unreachable", `The runtime of intern ${intern.id} is not reachable`);
    const relay = {
      deps,
      access,
      hostTimeoutMs: limits.hostTimeoutMs,
      internId: intern.id,
      model: intern.model || "default",
      signal: ctx.signal,
    };
    if (turn.kind === "answer") {
      const { runId, attached } = await deliverAnswer(intern, access, turn);
      yield* relayRun(attached, { ...relay, runId, sessionId: turn.sessionId });
      return;
    }
    if (turn.sessionId !== undefined) {
      if (!(await sessionExists(sequelize, turn.sessionId, intern.id)))
        throw internChatError(404, "not_found", `Session ${turn.sessionId} of intern ${intern.id} not found`);
      const open = await openRunOf(sequelize, turn.sessionId);
      if (open && (await steer(access, open, turn.prompt))) {
        yield { event: { case: "steered", value: { sessionId: turn.sessionId, status: InternReplyStatus.STEERED } } };
        return;
      }
    }
    // A new session is only made with its run: a refused prompt leaves no session behind.
    const session =
      turn.sessionId === undefined
        ? { sessionId: newSessionId(), newSession: true }
        : { sessionId: turn.sessionId, newSession: false };
    const { runId, attached } = await startRun(caller, intern, access, session, turn);
    yield* relayRun(attached, { ...relay, runId, sessionId: session.sessionId });
  }

  /** A key whose creator left the organization, or an intern whose creator did. */
  async function requireCreatorsInOrganization(caller: Caller, intern: InternRow): Promise<void> {
    for (const userId of new Set([caller.key.creatorUserId, intern.creatorUserId])) {
      if (userId && !(await isMember(caller.organization.id, userId))) {
        throw gatewayError(
          403,
          "The creator of this API key or of this intern is no longer a member of the organization",
        );
      }
    }
  }

  /** Runs `take` as one of the intern's turns (prompts, answers and steers), or answers 429 past the limit. */
  async function asTurn<T>(internId: string, take: (transaction: Transaction) => Promise<T>): Promise<T> {
    const outcome = await withinTurnLimit(sequelize, internId, limits.turnsPerMinute, take);
    if (outcome === "limited") {
      throw internChatError(
        429,
        "rate_limited",
        `Too many turns with intern ${internId}: ` +
          `at most ${limits.turnsPerMinute} prompts, answers and steering messages per minute`,
        { "retry-after": "60" },
      );
    }
    return outcome.taken;
  }

  /** Delivers the prompt into the open run; false when the host says that run has ended. */
  async function steer(access: InternHostAccess, run: RunRow, prompt: string): Promise<boolean> {
    const steerId = await asTurn(run.intern_id, (transaction) => recordSteer(sequelize, run, transaction));
    let reply: HostReply;
    try {
      reply = await hostCall(access, "POST", `/runs/${run.id}/messages`, { content: prompt }, limits.hostTimeoutMs);
    } catch (err) {
      await forgetSteer(sequelize, steerId);
      throw err;
    }
    if (reply.status === 202) return true;
    await forgetSteer(sequelize, steerId);
    // The host holds a bounded number of messages a run has not read yet; they are turns waiting.
    if (reply.status === 429)
      throw internChatError(
        429,
        "rate_limited",
        `The run of session ${run.session_id} has too many steering messages it has not read yet: ${messageOf(reply)}`,
      );
    if (reply.status !== 404 && reply.status !== 409) throw unexpected(reply);
    await finishRun(sequelize, run.id, "ended", null);
    return false;
  }

  async function startRun(
    caller: Caller,
    intern: InternRow,
    access: InternHostAccess,
    session: { sessionId: string; newSession: boolean },
    turn: Extract<ChatTurn, { kind: "prompt" }>,
  ): Promise<{ runId: string; attached: HostEvents }> {
    const run = {
      id: randomUUID(),
      ...session,
      internId: intern.id,
      keyHash: caller.key.hash,
      approvalMode: turn.approvalMode,
    };
    if (!(await asTurn(intern.id, (transaction) => insertRun(sequelize, run, transaction)))) {
      throw internChatError(503, "busy", `Session ${run.sessionId} started another run at the same moment; try again`);
    }
    let opened: HostEvents | HostReply;
    try {
      opened = await hostStream(
        access,
        "POST",
        "/runs",
        { run_id: run.id, session_id: run.sessionId, prompt: turn.prompt, approval_mode: turn.approvalMode },
        limits.hostTimeoutMs,
      );
    } catch (err) {
      await discardRun(sequelize, run);
      throw err;
    }
    if (!isReply(opened)) return { runId: run.id, attached: opened };
    await discardRun(sequelize, run);
    if (opened.status === 503)
      throw internChatError(
        503,
        "busy",
        `Intern ${intern.id} cannot hold another run open; answer or end one of its runs first`,
      );
    throw unexpected(opened);
  }

  async function deliverAnswer(
    intern: InternRow,
    access: InternHostAccess,
    turn: Extract<ChatTurn, { kind: "answer" }>,
  ): Promise<{ runId: string; attached: HostEvents }> {
    const unknown = () =>
      internChatError(
        404,
        "interaction_unknown",
        `No pending question of session ${turn.sessionId} has tool_call_id ${turn.toolCallId}`,
      );
    if (!(await sessionExists(sequelize, turn.sessionId, intern.id))) throw unknown();
    const question = await findQuestion(sequelize, turn.toolCallId, turn.sessionId);
    if (!question) throw unknown();
    const notPending = (why: string) =>
      internChatError(409, "interaction_not_pending", `Question ${turn.toolCallId} is no longer pending: ${why}`);
    if (question.status === "answered") throw notPending("it was answered already");
    if (question.status === "closed" || (question.run_status !== "paused" && question.run_status !== "running"))
      throw notPending("the run that asked has ended");
    if (question.deadline_at.getTime() <= Date.now()) {
      await finishRun(sequelize, question.run_id, "cancelled", null);
      throw notPending("its deadline passed and the run was cancelled");
    }
    // Claimed before delivery: of concurrent replies (any instance, a client's retry) one goes on.
    if (!(await asTurn(intern.id, (transaction) => claimQuestion(sequelize, question, transaction))))
      throw notPending("another reply answered it first, or its deadline passed");
    const reply = await deliver(access, question, turn.answer);
    if (reply.status === 400)
      throw internChatError(
        400,
        "bad_request",
        `The intern did not accept the answer to ${turn.toolCallId}: ${messageOf(reply)}`,
      );
    if (reply.status === 404 || reply.status === 409) {
      await finishRun(sequelize, question.run_id, "ended", null);
      throw notPending("the run that asked has ended");
    }
    // 202: delivered now; 200: answered on the host meanwhile (a terminal client), the run went on.
    if (reply.status !== 202 && reply.status !== 200) throw unexpected(reply);
    const attached = await hostStream(
      access,
      "GET",
      `/runs/${question.run_id}/events?after=${question.event_seq}`,
      undefined,
      limits.hostTimeoutMs,
    );
    if (!isReply(attached)) return { runId: question.run_id, attached };
    if (attached.status === 410)
      throw internChatError(
        410,
        "attachment_failed",
        `Run of question ${turn.toolCallId} produced more output since the pause than is kept for replay`,
      );
    if (attached.status === 404) throw notPending("the run that asked has ended");
    throw unexpected(attached);
  }

  /** The claimed answer to the host; a refused or undelivered one releases the claim (the deadline stays). */
  async function deliver(access: InternHostAccess, question: QuestionRow, answer: string): Promise<HostReply> {
    let reply: HostReply;
    try {
      reply = await hostCall(
        access,
        "POST",
        `/runs/${question.run_id}/answers`,
        { tool_call_id: question.tool_call_id, answer },
        limits.hostTimeoutMs,
      );
    } catch (err) {
      await releaseQuestion(sequelize, question);
      throw err;
    }
    if (reply.status === 400) await releaseQuestion(sequelize, question);
    return reply;
  }

  function unexpected(reply: HostReply): ConnectError {
    log.warn({ status: reply.status, error: messageOf(reply) }, "unexpected answer of an intern host");
    return internChatError(500, "internal_error", "The intern's runtime failed; try again");
  }

  return {
    async *chatCompletions(req, ctx) {
      try {
        yield* chat(req, ctx);
      } catch (err) {
        throw asChatError(err);
      }
    },
  };

  /**
   * Only the host's failures have chat reasons of their own (502, 504); everything else is the
   * error interceptor's (server/platform/rpc/error-interceptor.ts), which maps a database outage to 503,
   * logs without Postgres' text and gives the chat's 500 its `internal_error` reason.
   */
  function asChatError(err: unknown): unknown {
    if (!(err instanceof HostCallError)) return err;
    const [status, reason]: [number, InternChatReason] =
      err.kind === "timeout" ? [504, "timeout"] : [502, "intern_unreachable"];
    return internChatError(status, reason, err.message);
  }
}

function messageOf(reply: HostReply): string {
  return typeof reply.body.error === "string" ? reply.body.error : `status ${reply.status}`;
}
