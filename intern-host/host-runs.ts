import { randomBytes } from "node:crypto";
import { createDestinationGuard, type DestinationGuard } from "../egress/destination-guard.js";
import { runAgent } from "./agent/agent-loop.js";
import type { ChatMessage } from "./agent/model-client.js";
import type {
  ApprovalMode,
  HostConfig,
  QuestionArguments,
  ReleasedSecret,
  RunEndStatus,
  RunEvent,
  RunUsage,
} from "../wire/host-protocol.js";
import type { SessionStore } from "./session-store.js";
import { errorMessage } from "../wire/errors.js";

/**
 * The runs of one intern host. A run's output is a numbered event list: kept (up to the replay
 * budget, oldest dropped first) so that a stream attaching later can continue from any retained
 * position, and written to every attached stream as it happens. A run is `running`, `paused` on
 * a question, or `ended`. It ends when the agent finishes, when it is cancelled (DELETE, shutdown,
 * the last stream going away while it runs), when a question's deadline passes (fixed when asked:
 * a rejected answer does not move it), or at the run's own time limit.
 *
 * Who cancels a run whose client went away ("client disconnects while streaming →
 * cancelled", docs/api/interns.md) is decided here alone, by `detach`: the last stream leaving a running run cancels
 * it. The gateway's relay only detaches its own stream. So a run watched by one chat client (the
 * usual case) is cancelled when that client leaves, while one also watched by a terminal client
 * in host mode goes on for it; a relay that cancelled the run itself would cut that client off.
 */
export interface Consumer {
  /** The stream's name (host-protocol.ts `ATTACHMENT_HEADER`). */
  readonly id: string;
  write(event: RunEvent): void;
  end(): void;
}

/**
 * Steering messages a run holds before reading them (at its next model call). The gateway's turn
 * limit paces them, but it may be off, and a paused run reads nothing for up to its question's
 * deadline: the cap keeps a client from filling the host's memory meanwhile.
 */
export const MAX_UNREAD_MESSAGES = 32;
export const MAX_UNREAD_BYTES = 4 * 1024 * 1024;

export type AnswerOutcome = { status: 202 } | { status: 200; seq: number } | { status: 400 | 404 | 409; error: string };

interface Pending {
  toolCallId: string;
  deadline: Date;
  question: QuestionArguments;
  resolve(answer: string): void;
  timer: NodeJS.Timeout;
  /**
   * Rejects the question when the run is aborted; removed once it is answered, so questions leave
   * no listener behind.
   */
  onAbort(): void;
}

/** Ended runs stay this long so that a late attach still learns how they ended. */
const ENDED_RETENTION_MS = 10 * 60_000;

export class HostRun {
  status: "running" | "paused" | "ended" = "running";
  readonly consumers = new Map<string, Consumer>();
  readonly abort = new AbortController();
  usage: RunUsage | null = null;
  /** How the run ended, once it has. */
  endStatus: RunEndStatus | undefined;
  private inbox: string[] = [];
  private inboxBytes = 0;
  /** Set when the agent has given its final answer: a message accepted now would never be read. */
  private inboxClosed = false;
  private readonly events: Array<{ event: RunEvent; bytes: number }> = [];
  private retainedBytes = 0;
  private nextSeq = 1;
  private firstRetained = 1;
  private pending: Pending | undefined;
  private readonly asked = new Map<string, number>();
  private readonly runTimer: NodeJS.Timeout;

  constructor(
    readonly id: string,
    readonly sessionId: string,
    readonly approvalMode: ApprovalMode,
    private readonly limits: HostConfig["limits"],
    private readonly onEnded: (run: HostRun) => void,
  ) {
    this.runTimer = setTimeout(() => this.cancel("deadline", "the run reached its time limit"), limits.runTimeoutMs);
  }

  emit(event: DistributiveOmit<RunEvent, "seq">): number {
    const full = { ...event, seq: this.nextSeq++ } as RunEvent;
    const bytes = Buffer.byteLength(JSON.stringify(full));
    this.events.push({ event: full, bytes });
    this.retainedBytes += bytes;
    while (this.retainedBytes > this.limits.replayBytes && this.events.length > 1) {
      this.retainedBytes -= this.events.shift()!.bytes;
      this.firstRetained = this.events[0]!.event.seq;
    }
    for (const consumer of this.consumers.values()) consumer.write(full);
    return full.seq;
  }

  /** The question the run waits on, if it is paused. */
  get pendingQuestion(): { toolCallId: string; deadline: Date } | undefined {
    return this.pending && { toolCallId: this.pending.toolCallId, deadline: this.pending.deadline };
  }

  /** Whether every event after `after` is still retained. */
  retains(after: number): boolean {
    return after + 1 >= this.firstRetained;
  }

  /** Replays the retained events after `after` (see `retains`), then follows the run. */
  attach(after: number, consumer: Consumer): void {
    for (const { event } of this.events) if (event.seq > after) consumer.write(event);
    if (this.status === "ended") consumer.end();
    else this.consumers.set(consumer.id, consumer);
  }

  /**
   * A stream leaves (its connection closed, or its reader said so): the last one leaving a
   * running run cancels it. A paused run stays: its question went out, and the stream that
   * carried it ends there.
   */
  detach(id: string): void {
    const consumer = this.consumers.get(id);
    if (!consumer) return;
    this.consumers.delete(id);
    consumer.end();
    if (this.status === "running" && this.consumers.size === 0)
      this.cancel("cancelled", "the stream that watched the run went away");
  }

  /** Queues a steering message for the run's next model call. */
  steer(content: string): "queued" | "ended" | "full" {
    if (this.status === "ended" || this.inboxClosed) return "ended";
    const bytes = Buffer.byteLength(content);
    if (this.inbox.length >= MAX_UNREAD_MESSAGES || this.inboxBytes + bytes > MAX_UNREAD_BYTES) return "full";
    this.inbox.push(content);
    this.inboxBytes += bytes;
    return "queued";
  }

  /** The queued messages; with `closing` (the agent would end) and none queued, no more are taken. */
  takeMessages(closing: boolean): string[] {
    const taken = this.inbox;
    this.inbox = [];
    this.inboxBytes = 0;
    if (closing && taken.length === 0) this.inboxClosed = true;
    return taken;
  }

  ask(question: QuestionArguments): Promise<string> {
    if (this.abort.signal.aborted) return Promise.reject(this.abort.signal.reason);
    const toolCallId = `call_${randomBytes(12).toString("hex")}`;
    const deadline = new Date(Date.now() + this.limits.interactionTimeoutMs);
    // Paused before the event goes out: a stream that detaches on it must not cancel the run.
    this.status = "paused";
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => this.cancel("cancelled", "the question was not answered before its deadline"),
        this.limits.interactionTimeoutMs,
      );
      const onAbort = () => reject(this.abort.signal.reason);
      this.pending = { toolCallId, deadline, question, resolve, timer, onAbort };
      this.abort.signal.addEventListener("abort", onAbort, { once: true });
      const seq = this.emit({
        type: "question",
        tool_call_id: toolCallId,
        arguments: JSON.stringify(question),
        deadline_at: deadline.toISOString(),
      });
      this.asked.set(toolCallId, seq);
    });
  }

  answer(toolCallId: string, answer: unknown): AnswerOutcome {
    const seq = this.asked.get(toolCallId);
    if (seq === undefined) return { status: 404, error: `no question ${toolCallId} in this run` };
    if (this.status === "ended") return { status: 409, error: "the run has ended" };
    const pending = this.pending;
    if (pending?.toolCallId !== toolCallId) return { status: 200, seq };
    const refusal = refusalOf(pending.question, answer);
    if (refusal) return { status: 400, error: refusal };
    clearTimeout(pending.timer);
    this.abort.signal.removeEventListener("abort", pending.onAbort);
    this.pending = undefined;
    this.status = "running";
    this.emit({ type: "answered", tool_call_id: toolCallId });
    pending.resolve(answer as string);
    return { status: 202 };
  }

  /** Ends the run at once; the agent unwinds on the aborted signal. */
  cancel(status: Exclude<RunEndStatus, "stop" | "error">, message: string): void {
    if (this.status === "ended") return;
    this.abort.abort(new Error(message));
    this.end(status, message);
  }

  end(status: RunEndStatus, message: string | undefined): void {
    if (this.status === "ended") return;
    this.status = "ended";
    this.endStatus = status;
    clearTimeout(this.runTimer);
    if (this.pending) {
      clearTimeout(this.pending.timer);
      this.abort.signal.removeEventListener("abort", this.pending.onAbort);
    }
    this.pending = undefined;
    this.inbox = [];
    this.emit({ type: "end", status, ...(message ? { message } : {}), usage: this.usage });
    for (const consumer of this.consumers.values()) consumer.end();
    this.consumers.clear();
    this.onEnded(this);
  }
}

function refusalOf(question: QuestionArguments, answer: unknown): string | undefined {
  if (typeof answer !== "string" || answer.trim() === "") return "the answer must be a non-empty string";
  const options = question.options;
  if (options && options.length > 0 && !options.includes(answer))
    return `the answer must be one of: ${options.join(", ")}`;
  return undefined;
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

export interface HostRunsDeps {
  config: HostConfig;
  sessions: SessionStore;
  release(url: string): Promise<ReleasedSecret[]>;
}

export class HostRuns {
  private readonly runs = new Map<string, HostRun>();
  /** Where the fetch tool may go, the same for every run of this host. */
  private readonly fetchGuard: DestinationGuard;

  constructor(private readonly deps: HostRunsDeps) {
    const { config } = deps;
    this.fetchGuard = createDestinationGuard({
      allowedHosts: config.fetchAllowedHosts,
      resolveTimeoutMs: config.limits.fetchTimeoutMs,
      fixedAddresses: config.fetchResolve,
    });
  }

  get(id: string): HostRun | undefined {
    return this.runs.get(id);
  }

  list(): HostRun[] {
    return [...this.runs.values()];
  }

  openRuns(): number {
    let open = 0;
    for (const run of this.runs.values()) if (run.status !== "ended") open++;
    return open;
  }

  /** Starts a run; "busy" when the intern holds its maximum of open runs, "exists" for a reused id. */
  async start(body: {
    run_id: string;
    session_id: string;
    prompt: string;
    approval_mode: ApprovalMode;
  }): Promise<HostRun | "busy" | "exists"> {
    if (this.runs.has(body.run_id)) return "exists";
    if (this.openRuns() >= this.deps.config.limits.maxOpenRuns) return "busy";
    const history = await this.deps.sessions.load(body.session_id);
    // Checked again: the load gave other requests their turn.
    if (this.runs.has(body.run_id)) return "exists";
    if (this.openRuns() >= this.deps.config.limits.maxOpenRuns) return "busy";
    const run = new HostRun(body.run_id, body.session_id, body.approval_mode, this.deps.config.limits, (ended) => {
      setTimeout(() => this.runs.delete(ended.id), ENDED_RETENTION_MS).unref();
    });
    this.runs.set(run.id, run);
    this.drive(run, body.prompt, history);
    return run;
  }

  private drive(run: HostRun, prompt: string, history: ChatMessage[]): void {
    const { config } = this.deps;
    runAgent(
      {
        gatewayUrl: config.gatewayUrl,
        apiKey: config.apiKey,
        model: config.model,
        instructions: config.instructions,
        maxSteps: config.limits.maxSteps,
      },
      {
        sessionId: run.sessionId,
        prompt,
        history,
        signal: run.abort.signal,
        content: (text) => {
          if (run.status !== "ended") run.emit({ type: "content", text });
        },
        onUsage: (usage) => {
          run.usage = usage;
        },
        takeMessages: (closing) => run.takeMessages(closing),
        saveHistory: (messages) => this.deps.sessions.save(run.sessionId, messages),
        tools: {
          approvalMode: run.approvalMode,
          workDir: config.workDir,
          shell: {
            timeoutMs: config.limits.shellTimeoutMs,
            outputBytes: config.limits.shellOutputBytes,
            user: config.shellUser,
            tmpDir: config.tmpDir,
            limits: config.limits.shellLimits,
          },
          fetch: {
            release: this.deps.release,
            guard: this.fetchGuard,
            gatewayPorts: config.gatewayPorts,
            timeoutMs: config.limits.fetchTimeoutMs,
            bodyBytes: config.limits.fetchBodyBytes,
          },
          ask: (question) => run.ask(question),
          standing: {},
        },
      },
    ).then(
      (outcome) => run.end(outcome.status, outcome.message),
      (err: unknown) =>
        run.end("error", run.abort.signal.aborted ? undefined : `the intern failed: ${errorMessage(err)}`),
    );
  }

  /** Ends every run (the intern is being stopped). */
  cancelAll(message: string): void {
    for (const run of this.runs.values()) run.cancel("cancelled", message);
  }
}
