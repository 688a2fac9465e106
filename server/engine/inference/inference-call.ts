import { ConnectError, type HandlerContext } from "@connectrpc/connect";
import type { Span } from "@opentelemetry/api";
import { gatewayError, httpErrorOf } from "../../../wire/errors.js";
import { PROVIDER_KEY_HEADER } from "../../../wire/exchange.js";
import { REQUEST_ID_HEADER } from "../../../wire/request-id.js";
import { UPSTREAM_MS_HEADER } from "../../../wire/timing-headers.js";
import { upstreamWatchKey, type UpstreamWatch } from "../../../wire/upstream-watch.js";
import type { AdmissionTicket } from "../admission/lease-book.js";
import type { Engine } from "../engine.js";
import { affinityOf, type KeyChoice } from "../key-pools/key-pools.js";
import type { PoolKey } from "../key-pools/pool-key.js";
import { UpstreamError, type UpstreamTarget, type UpstreamUsage } from "../providers/provider.js";
import type { CachedAnswer } from "../response-cache/cached-answer.js";
import { callRecord, generationId, NO_USAGE, type LedgerCall, type Outcome } from "./call-ledger.js";
import type { CallRequest } from "./call-request.js";
import type { CallerContext } from "./caller-context.js";
import { isServed, type AttemptPolicy, type FailedAttempt, type Served as AttemptServed } from "./endpoint-attempts.js";
import type { Attempt } from "./routing.js";
import { usedTokens } from "./token-estimate.js";
import { toGatewayError } from "./upstream-errors.js";
import { logUpstreamFailure } from "./upstream-failures.js";
import { endUpstreamSpan, startUpstreamSpan, type UpstreamSpanEnd } from "./upstream-spans.js";
import type { ResolvedTarget } from "./upstream-targets.js";

/** What a call is opened with (call-opening.ts): everything decided before its first attempt. */
export interface CallOpening {
  context: CallerContext;
  request: CallRequest;
  /** The planned route: the endpoints to try, in order. */
  attempts: Attempt[];
  /** The admission that reserved the call's worst case; its settlement releases it. */
  ticket: AdmissionTicket;
  endUser: string | null;
  /** A `flag` content filter matched the input: marked on the ledger rows. */
  contentFlagged: boolean;
  /** The cached answer that answers this call, if the cache had one: no attempt is made. */
  cached: CachedAnswer | undefined;
}

/**
 * Where a call is in its life (drawn in README.md beside this file). `closed`: ended by close()
 * before it settled (the client went away, or its handler failed); it is recorded as failed on
 * the next turn unless its handler fails it first.
 */
export type CallState = "opened" | "attempting" | "settled" | "failed" | "closed";

/** The attempt that answered a live call. */
export type Served<T> = AttemptServed<T, Attempt>;

/**
 * One live inference call, shared by chat completions, embeddings, the translated formats and
 * decisions, once it is opened (call-opening.ts: governance, filters, route, cache, admission).
 * It holds the call's own state: its signal (the client's abort, the deadline, close()), the
 * attempt in progress and its span, and where it is in its life ({@link CallState}). It settles
 * exactly once: the real cost of the answer, or the failure, ends the reservation.
 *
 * Its collaborators do the rest: the endpoint loop (endpoint-attempts.ts, with this call as its
 * policy and its KeyChoice), the ledger rows (call-ledger.ts), the settlement writer.
 */
export class InferenceCall implements KeyChoice, AttemptPolicy<Attempt>, LedgerCall {
  readonly generationId = generationId();
  readonly signal: AbortSignal;
  state: CallState = "opened";
  readonly context: CallerContext;
  readonly request: CallRequest;
  readonly attempts: Attempt[];
  readonly endUser: string | null;
  readonly contentFlagged: boolean;
  readonly cached: CachedAnswer | undefined;
  private readonly ticket: AdmissionTicket;
  private readonly controller = new AbortController();
  private readonly deadline: NodeJS.Timeout;
  /** Time spent waiting on providers, over every attempt. */
  private upstreamMs = 0;
  /** The id the client was told (wire/request-id.ts): in the ledger row and the log lines. */
  readonly requestId: string | null;
  /** Where the attempt in progress (or the one that answered) went: failure lines name it. */
  private target: UpstreamTarget | undefined;
  /** That attempt's span while it is open (tracing on). */
  private span: Span | undefined;
  /** KeyChoice: the pooled keys this call tried and that failed, over all its endpoints. */
  readonly triedKeys: PoolKey[] = [];
  /** KeyChoice: the one pooled key this call's failures said something about. */
  judgedKey: PoolKey | undefined = undefined;
  private affinityValue: number | undefined;
  /**
   * The observing door's record of the providers' time (wire/upstream-watch.ts); it hears of this call's abort
   * itself.
   */
  private readonly watch: UpstreamWatch | undefined;

  constructor(
    private readonly engine: Engine,
    private readonly ctx: HandlerContext,
    opening: CallOpening,
  ) {
    this.context = opening.context;
    this.request = opening.request;
    this.attempts = opening.attempts;
    this.ticket = opening.ticket;
    this.endUser = opening.endUser;
    this.contentFlagged = opening.contentFlagged;
    this.cached = opening.cached;
    // One controller for the handler's abort, the deadline and close(): cheaper per call than
    // AbortSignal.any over AbortSignal.timeout, and every reason is a shared object.
    this.signal = this.controller.signal;
    this.requestId = ctx.requestHeader.get(REQUEST_ID_HEADER);
    if (ctx.signal.aborted) this.controller.abort(ctx.signal.reason);
    else ctx.signal.addEventListener("abort", this, { once: true });
    this.deadline = setTimeout(() => this.controller.abort(DEADLINE), engine.config.requestTimeoutMs).unref();
    this.watch = ctx.values.get(upstreamWatchKey);
    if (this.watch) this.signal.addEventListener("abort", this.watch, { once: true });
  }

  /** The handler's signal fired (this object is its listener: no closure per call). */
  handleEvent(): void {
    this.controller.abort(this.ctx.signal.reason);
  }

  /**
   * Runs `run` against each planned endpoint until one answers (endpoint-attempts.ts: this call is
   * the loop's policy). Each failed attempt the loop moves on from is recorded in the ledger, which
   * feeds endpoint uptime; the last failure, or a non-retryable one, settles the call and is thrown
   * as the API's error.
   */
  async attempt<T>(run: (target: UpstreamTarget, attempt: Attempt) => Promise<T>): Promise<Served<T>> {
    this.state = "attempting";
    const outcome = await this.engine.tryEndpoints(this.context, this.attempts, run, this);
    if (outcome === undefined) throw gatewayError(502, "No endpoint could serve the request");
    if (!isServed(outcome)) {
      const { error, attempt, isByok, startedAt } = outcome;
      if (!(error instanceof UpstreamError) || this.signal.aborted)
        throw this.settleFailure(error, attempt, isByok, startedAt);
      this.upstreamMs += performance.now() - startedAt;
      throw this.settleFailure(toGatewayError(error, attempt.endpoint.providerName), attempt, isByok, startedAt);
    }
    // A stream's provider call goes on until its last chunk (settle).
    if (!this.request.streamed) this.watch?.closed();
    this.upstreamMs += performance.now() - outcome.startedAt;
    // What the provider took (every attempt's wait), so the edge can say what the gateway added.
    this.ctx.responseHeader.set(UPSTREAM_MS_HEADER, this.upstreamMs.toFixed(3));
    if (outcome.pooled) {
      const { pool, key } = outcome.pooled;
      this.ctx.responseHeader.set(PROVIDER_KEY_HEADER, `${pool.provider}/${key.label}`);
    }
    return outcome;
  }

  /** AttemptPolicy: the attempt's target is known; its span opens and the observing door hears of it. */
  sending(attempt: Attempt, { target }: ResolvedTarget): void {
    this.target = target;
    this.span = startUpstreamSpan(this.request.api, attempt.endpoint.providerSlug, attempt.model.id, target);
    this.watch?.opened();
  }

  /**
   * AttemptPolicy: an attempt failed. Its span ends and the provider's failure is logged; one the
   * loop moves on from is a ledger row of its own.
   */
  failed({ error, attempt, isByok, pooled, startedAt }: FailedAttempt<Attempt>, next: Attempt | undefined): void {
    // An abort has already told the watch (the call's signal); a provider's failure ends its call.
    this.watch?.closed();
    this.report(error, attempt, next, undefined, pooled?.key.label);
    this.target = undefined;
    if (next === undefined || !(error instanceof UpstreamError)) return;
    this.upstreamMs += performance.now() - startedAt;
    this.recordAttempt(attempt, isByok, {
      status: "error",
      httpStatus: statusOf(toGatewayError(error, attempt.endpoint.providerName)),
      usage: NO_USAGE,
      latencyMs: null,
      generationMs: elapsed(startedAt),
    });
  }

  /** AttemptPolicy: the pooled keys are chosen by this call (it is its own KeyChoice). */
  get keyChoice(): KeyChoice {
    return this;
  }

  /** KeyChoice: the call's affinity, hashed on first use (only a provider with a key pool asks). */
  affinity(): number {
    this.affinityValue ??= affinityOf(this.request.sessionId, this.request.bodies[0]);
    return this.affinityValue;
  }

  /**
   * Records a call the cache answered: billed 0, with the original call's token counts and what it
   * saved, against the endpoint that made the cached answer (the route's first).
   */
  settleCached(): void {
    const cached = this.cached;
    if (!cached) throw new Error("settleCached() on a call the cache did not answer");
    this.finish(
      "settled",
      this.attempts[0]!,
      false,
      { status: "success", httpStatus: 200, usage: cached.usage, latencyMs: 0, generationMs: 0 },
      cached.costUsd,
    );
  }

  /** Records the served call with its real cost and releases the reservation; returns the cost. */
  settle(served: Served<unknown>, outcome: Outcome): string {
    this.watch?.closed();
    this.endSpan({
      inputTokens: outcome.usage.promptTokens,
      outputTokens: outcome.usage.completionTokens,
      responseModel: outcome.responseModel,
    });
    return this.finish("settled", served.attempt, served.isByok, outcome);
  }

  /**
   * Turns a failure into the error the caller sees and settles the call: an abort by the client is
   * `cancelled` (499), the deadline 504, anything else as mapped. Tokens already produced count.
   */
  fail(err: unknown, attempt: Attempt, isByok: boolean, startedAt: number, usage: UpstreamUsage = NO_USAGE): unknown {
    this.report(err, attempt, undefined, usage);
    return this.settleFailure(err, attempt, isByok, startedAt, usage);
  }

  /** `fail` for an attempt already reported. */
  private settleFailure(
    err: unknown,
    attempt: Attempt,
    isByok: boolean,
    startedAt: number,
    usage: UpstreamUsage = NO_USAGE,
  ): unknown {
    const error = this.errorFor(err, attempt);
    const cancelled = statusOf(error) === 499;
    if (!this.isSettled) {
      this.finish("failed", attempt, isByok, {
        status: cancelled ? "cancelled" : "error",
        httpStatus: statusOf(error),
        usage,
        latencyMs: null,
        generationMs: elapsed(startedAt),
      });
    }
    return error;
  }

  /**
   * Ends the call: aborts the upstream request if it is still open. A call that ends here without
   * having been settled (its handler failed between admission and an answer) is settled as failed,
   * so its reservation never outlives it.
   */
  close(): void {
    const cancelled = this.signal.aborted;
    if (!this.isSettled) this.state = "closed";
    clearTimeout(this.deadline);
    this.ctx.signal.removeEventListener("abort", this);
    this.controller.abort(CLOSED);
    // Deferred: a handler closing a call it is about to fail (with the tokens already produced)
    // records that failure first.
    setImmediate(() => {
      this.endSpan({ errorType: cancelled ? "cancelled" : OTHER_ERROR });
      if (this.isSettled) return;
      this.finish("failed", this.attempts[0]!, false, {
        status: cancelled ? "cancelled" : "error",
        httpStatus: cancelled ? 499 : 500,
        usage: NO_USAGE,
        latencyMs: null,
        generationMs: null,
      });
    });
  }

  /** Whether the call's final ledger row is written (its reservation released). */
  private get isSettled(): boolean {
    return this.state === "settled" || this.state === "failed";
  }

  /** The final row: the call moves to `state`, and its reservation ends with the real cost. Returns the cost. */
  private finish(
    state: "settled" | "failed",
    attempt: Attempt,
    isByok: boolean,
    outcome: Outcome,
    cacheSavings?: string,
  ): string {
    this.state = state;
    const record = callRecord(this, attempt, isByok, outcome, cacheSavings);
    // Written behind: the answer does not wait for the database (settlement-writer.ts).
    this.engine.settlement.enqueue(record, this.ticket.settle(record.costUsd, usedTokens(outcome.usage)));
    this.engine.observers?.inference?.attemptRecorded(record, false);
    return record.costUsd;
  }

  /** A failed attempt the call moved on from: a row of its own (endpoint uptime), the reservation stays. */
  private recordAttempt(attempt: Attempt, isByok: boolean, outcome: Outcome): void {
    const record = callRecord(this, attempt, isByok, outcome);
    this.engine.settlement.enqueue(record, []);
    this.engine.observers?.inference?.attemptRecorded(record, true);
  }

  /**
   * Ends the failed attempt's span and logs the failure, if the provider's side failed: not when
   * the client went away, nor for errors of the gateway's own (those reach the error interceptor).
   */
  private report(
    err: unknown,
    attempt: Attempt,
    next: Attempt | undefined,
    usage?: UpstreamUsage,
    poolKey?: string,
  ): void {
    const deadline = this.signal.aborted && this.signal.reason === DEADLINE;
    const upstream = err instanceof UpstreamError && !this.signal.aborted ? err : undefined;
    const status = upstream?.failure === "status" ? upstream.options.status : undefined;
    if (this.span !== undefined) {
      const errorType = deadline
        ? "deadline"
        : this.signal.aborted
          ? "cancelled"
          : upstream
            ? status === undefined
              ? upstream.failure
              : String(status)
            : OTHER_ERROR;
      this.endSpan({
        errorType,
        status,
        message: upstream?.message,
        inputTokens: usage?.promptTokens,
        outputTokens: usage?.completionTokens,
      });
    }
    if ((upstream === undefined && !deadline) || this.target === undefined) return;
    logUpstreamFailure(this.engine.log, {
      requestId: this.requestId,
      provider: attempt.endpoint.providerSlug,
      model: attempt.model.id,
      upstreamModel: this.target.upstreamModelId,
      baseUrl: this.target.baseUrl,
      failure: upstream?.failure ?? "deadline",
      status,
      detail: upstream?.message ?? "",
      poolKey,
      next: next && { provider: next.endpoint.providerSlug, model: next.model.id },
    });
  }

  private endSpan(end: UpstreamSpanEnd): void {
    if (this.span === undefined) return;
    endUpstreamSpan(this.span, end);
    this.span = undefined;
  }

  private errorFor(err: unknown, attempt: Attempt): unknown {
    if (this.signal.aborted) {
      const reason: unknown = this.signal.reason;
      if (reason === DEADLINE) return gatewayError(504, "Operation aborted due to timeout", { retryable: true });
      return gatewayError(499, "Request cancelled by the client");
    }
    return err instanceof UpstreamError ? toGatewayError(err, attempt.endpoint.providerName) : err;
  }
}

/** Abort reasons, shared: an abort without one builds a DOMException and its stack on every call. */
const DEADLINE = new DOMException("The inference call's deadline passed", "TimeoutError");
const CLOSED = new DOMException("The inference call is over", "AbortError");
/** OpenTelemetry's `error.type` for a failure of no known kind. */
const OTHER_ERROR = "_OTHER";

function statusOf(error: unknown): number {
  return error instanceof ConnectError ? httpErrorOf(error).status : 500;
}

function elapsed(startedAt: number): number {
  return Math.round(performance.now() - startedAt);
}
