/**
 * Relays one attachment to a run (intern-host/host-runs.ts) as stream chunks (docs/api/interns.md), keeping
 * the run's row in step:
 * - content → content chunks (after a first chunk with the assistant role, sent at once so the
 *   event stream and its keepalives start before the model's first word);
 * - a question → stored (so a reply can land on any instance), then the question chunk, a chunk
 *   with `finish_reason` `tool_calls`, the final chunk with `usage` null; the stream ends and the
 *   run stays paused;
 * - the run's end → `stop` and the final chunk with its usage, or when the intern ended it
 *   (cancellation, deadline, failure) an error chunk 410 `run_ended`, then the final chunk;
 * - the host's stream breaking without an end → error chunk 410 `stream_severed`, final chunk; the
 *   run's state is unknown;
 * - the client leaving while the run runs → the relay detaches its stream; the host cancels the run
 *   when no other stream watches it (see `leave`).
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  InternChatChunkSchema,
  InternErrorReason,
  InternFinishReason,
  InternMessageRole,
  InternToolCallType,
  type InternChatEventSchema,
  type InternChatChunk,
} from "../../../gen/gateway/v1/intern_chat_pb.js";
import type { Deps } from "../deps.js";
import type { RunEndStatus, RunEvent, RunUsage } from "../../../wire/host-protocol.js";
import { retryableOf } from "./intern-chat-errors.js";
import { hostCall, type HostEvents } from "./intern-host-client.js";
import type { InternHostAccess } from "./intern-hosts.js";
import { finishRun, recordQuestion, type RunStatus } from "./intern-store-runs.js";
import { errorMessage } from "../../../wire/errors.js";

type ChatEvent = MessageInitShape<typeof InternChatEventSchema>;

export interface RelayTarget {
  deps: Pick<Deps, "sequelize" | "log">;
  access: InternHostAccess;
  hostTimeoutMs: number;
  internId: string;
  runId: string;
  sessionId: string;
  model: string;
  /** The client's request: aborted when it goes away. */
  signal: AbortSignal;
}

const END_STATUS: Record<RunEndStatus, Exclude<RunStatus, "running" | "paused">> = {
  stop: "completed",
  cancelled: "cancelled",
  deadline: "ended",
  error: "ended",
};

export async function* relayRun(attached: HostEvents, target: RelayTarget): AsyncGenerator<ChatEvent> {
  const { sequelize, log } = target.deps;
  const frame = new ChunkFrames(target.model, target.sessionId);
  let settled = false;
  const onAbort = () => attached.close();
  target.signal.addEventListener("abort", onAbort, { once: true });
  try {
    yield frame.start();
    const events = attached.events[Symbol.asyncIterator]();
    for (;;) {
      let next: IteratorResult<RunEvent>;
      try {
        next = await events.next();
      } catch {
        next = { done: true, value: undefined };
      }
      if (target.signal.aborted) return;
      if (next.done) {
        settled = true;
        await finishRun(sequelize, target.runId, "unknown", null);
        yield frame.error(
          410,
          "stream_severed",
          "The connection to the intern broke before it confirmed the run's state",
        );
        yield frame.final(null);
        return;
      }
      const event = next.value;
      if (event.type === "content") {
        yield frame.content(event.text);
      } else if (event.type === "question") {
        settled = true;
        await recordQuestion(sequelize, {
          toolCallId: event.tool_call_id,
          runId: target.runId,
          sessionId: target.sessionId,
          internId: target.internId,
          arguments: event.arguments,
          seq: event.seq,
          deadlineAt: new Date(event.deadline_at),
        });
        yield frame.question(event.tool_call_id, event.arguments);
        yield frame.finish(InternFinishReason.TOOL_CALLS);
        yield frame.final(null);
        return;
      } else if (event.type === "end") {
        settled = true;
        await finishRun(sequelize, target.runId, END_STATUS[event.status], event.usage);
        if (event.status === "stop") yield frame.finish(InternFinishReason.STOP);
        else yield frame.error(410, "run_ended", `The intern ended the run: ${event.message ?? event.status}`);
        yield frame.final(event.usage);
        return;
      }
    }
  } finally {
    target.signal.removeEventListener("abort", onAbort);
    attached.close();
    if (!settled) {
      await leave(attached, target).catch((err: unknown) =>
        log.warn(
          { internId: target.internId, runId: target.runId, err: errorMessage(err) },
          "intern run left in an unknown state by its client",
        ),
      );
    }
  }
}

/**
 * The client went away before the run paused or ended (a client disconnecting while
 * streaming cancels the run; docs/api/interns.md). The host decides, by one rule (host-runs.ts `detach`): the last
 * stream leaving a running run cancels it. The relay therefore only detaches its own stream and
 * records what the host reports, so a terminal client still watching the run is not cut off.
 * A run that paused on a question just as the client left is cancelled when nobody else watches:
 * its question reached no one who could answer it.
 */
async function leave(attached: HostEvents, target: RelayTarget): Promise<void> {
  const { sequelize } = target.deps;
  // A host that names no streams (another version) has detached this one as its connection closed.
  if (attached.attachment === "") return;
  const left = await hostCall(
    target.access,
    "DELETE",
    `/runs/${target.runId}/attachments/${attached.attachment}`,
    undefined,
    target.hostTimeoutMs,
  );
  if (left.status === 404) return finishRun(sequelize, target.runId, "ended", null);
  if (left.status !== 200) throw new Error(`the intern's host answered ${left.status} to the detach`);
  const { status, end_status: endStatus, watchers } = left.body;
  if (status === "paused" && watchers === 0) {
    await hostCall(target.access, "DELETE", `/runs/${target.runId}`, undefined, target.hostTimeoutMs);
    return finishRun(sequelize, target.runId, "cancelled", null);
  }
  if (status === "ended")
    await finishRun(
      sequelize,
      target.runId,
      typeof endStatus === "string" && Object.hasOwn(END_STATUS, endStatus)
        ? END_STATUS[endStatus as RunEndStatus]
        : "ended",
      null,
    );
}

/** The chunks of one response: one id and creation time, the intern's model. */
class ChunkFrames {
  private readonly id = `chatcmpl-${randomBytes(12).toString("hex")}`;
  private readonly created = BigInt(Math.floor(Date.now() / 1000));

  constructor(
    private readonly model: string,
    private readonly sessionId: string,
  ) {}

  start(): ChatEvent {
    return this.chunk({ choices: [{ index: 0, delta: { role: InternMessageRole.ASSISTANT, content: "" } }] });
  }

  content(text: string): ChatEvent {
    return this.chunk({ choices: [{ index: 0, delta: { content: text } }] });
  }

  question(toolCallId: string, args: string): ChatEvent {
    const call = {
      index: 0,
      id: toolCallId,
      type: InternToolCallType.FUNCTION,
      function: { name: "svc.provide_input", arguments: args },
    };
    return this.chunk({ choices: [{ index: 0, delta: { toolCalls: [call] } }] });
  }

  finish(reason: InternFinishReason): ChatEvent {
    return this.chunk({ choices: [{ index: 0, delta: {}, finishReason: reason }] });
  }

  error(code: number, reason: "run_ended" | "stream_severed", message: string): ChatEvent {
    const wire = reason === "run_ended" ? InternErrorReason.RUN_ENDED : InternErrorReason.STREAM_SEVERED;
    return this.chunk({
      choices: [{ index: 0, delta: {}, finishReason: InternFinishReason.ERROR }],
      error: { code, message, metadata: { reason: wire, retryable: retryableOf(reason) } },
    });
  }

  /** Empty choices, the session to quote on a reply, the run's usage or null. */
  final(usage: RunUsage | null): ChatEvent {
    return this.chunk({
      choices: [],
      sessionId: this.sessionId,
      ...(usage
        ? {
            usage: {
              promptTokens: BigInt(usage.prompt_tokens),
              completionTokens: BigInt(usage.completion_tokens),
              totalTokens: BigInt(usage.total_tokens),
              ...(usage.cost === undefined ? {} : { cost: usage.cost }),
            },
          }
        : {}),
    });
  }

  private chunk(parts: MessageInitShape<typeof InternChatChunkSchema>): ChatEvent {
    const value: InternChatChunk = create(InternChatChunkSchema, {
      id: this.id,
      object: "chat.completion.chunk",
      created: this.created,
      model: this.model,
      ...parts,
    });
    return { event: { case: "chunk", value } };
  }
}
