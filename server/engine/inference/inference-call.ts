import { randomFillSync } from "node:crypto";
import { ConnectError, type HandlerContext } from "@connectrpc/connect";
import type { Span } from "@opentelemetry/api";
import type { JsonObject } from "@bufbuild/protobuf";
import type { ProviderPreferences } from "../../../gen/gateway/v1/inference_pb.js";
import { isFreeEndpoint } from "../catalog/catalog.js";
import { callerOf } from "../../platform/core/auth.js";
import { gatewayError, httpErrorOf } from "../../../wire/errors.js";
import { costUsd } from "../money/money.js";
import type { AdmissionTicket } from "../admission/lease-book.js";
import { quantitiesFor } from "../admission/quantities.js";
import { filterCall, type CallFiltering } from "../content-filters/call-filters.js";
import { blockedError } from "../content-filters/request-content.js";
import { checkEndUser } from "../governance/end-user-registration.js";
import { UpstreamError, type UpstreamTarget, type UpstreamUsage } from "../providers/provider.js";
import type { CallRecord } from "../usage/usage-store.js";
import type { CallerContext } from "./caller-context.js";
import { worstCaseCost } from "./cost-estimate.js";
import type { Attempt, InferenceApi } from "./routing.js";
import { UPSTREAM_MS_HEADER } from "../../../wire/timing-headers.js";
import { REQUEST_ID_HEADER } from "../../../wire/request-id.js";
import { CONTENT_FLAGGED_HEADER, PROVIDER_KEY_HEADER } from "../../../wire/exchange.js";
import { upstreamWatchKey, type UpstreamWatch } from "../../../wire/upstream-watch.js";
import { affinityOf, type KeyChoice } from "../key-pools/key-pools.js";
import type { PoolKey } from "../key-pools/pool-key.js";
import type { ResolvedTarget } from "./upstream-targets.js";
import {
  isServed,
  tryEndpoints,
  type AttemptPolicy,
  type FailedAttempt,
  type Served as AttemptServed,
} from "./endpoint-attempts.js";
import { logUpstreamFailure } from "./upstream-failures.js";
import { endUpstreamSpan, startUpstreamSpan, type UpstreamSpanEnd } from "./upstream-spans.js";
import { checkServerTools } from "./server-tools.js";
import { toGatewayError } from "./upstream-errors.js";
import type { Engine, EngineParts } from "../engine.js";
import type { CachedAnswer } from "../response-cache/cached-answer.js";
import type { ApplyingGuardrail } from "../governance/applying-guardrails.js";
import { isRateLimit } from "../admission/quantities.js";
import { refusedLimit } from "../admission/refusals.js";
import { rateLimitHeaders } from "../../../wire/rate-limit-headers.js";
import { recordRefusal } from "./rate-limit-refusals.js";
import { usedTokens, worstCaseTokens } from "./token-estimate.js";

export interface CallRequest {
  api: InferenceApi;
  /**
   * The bodies the call will send upstream (one per upstream request of an attempt): the content
   * filters of the caller's guardrails rewrite their input side in place, or refuse the call,
   * before it is routed or admitted.
   */
  bodies: readonly JsonObject[];
  /** The requested model, then fallbacks. */
  modelIds: string[];
  preferences: ProviderPreferences | undefined;
  /** Request parameters in use (for `require_parameters`). */
  parameters: string[];
  user: string | undefined;
  /** From the body, else the `x-session-id` header. */
  sessionId: string | undefined;
  promptTokens: number;
  /** The request's completion token cap, if any. */
  completionTokens: number | undefined;
  serverTools: string[];
  streamed: boolean;
  /** The call's use of the response cache, when it asked for it (server/engine/response-cache). */
  cache?: CacheProbe;
}

/** Looks up a cached answer once the route is planned, before admission: a hit goes nowhere upstream. */
export interface CacheProbe {
  lookup(caller: CacheCaller, first: Attempt, signal: AbortSignal): Promise<CachedAnswer | undefined>;
}

/** What the cache reads of the caller: its workspace, and its guardrails (one demanding ZDR turns the cache off). */
export interface CacheCaller {
  workspace: CacheWorkspace;
  guardrails: readonly ApplyingGuardrail[];
}

/** What the cache reads of the caller's workspace: its id, and its default TTL. */
export interface CacheWorkspace {
  id: string;
  cacheTtlSeconds: number | null;
}

/** The attempt that answered a live call. */
export type Served<T> = AttemptServed<T, Attempt>;

export interface Outcome {
  status: CallRecord["status"];
  httpStatus: number;
  usage: UpstreamUsage;
  latencyMs: number | null;
  generationMs: number | null;
  /** The model the provider says answered (traces), when it says. */
  responseModel?: string;
}

/**
 * One inference call from admission to settlement, shared by chat completions, embeddings and
 * decisions: take the caller's governance context (cached), refuse what policy forbids, plan the
 * route, admit the worst-case cost against this instance's leases (rate limit, free-model quota,
 * every budget layer; no round trip while the leases cover it), try the endpoints in order with
 * fallbacks on retryable failures, and queue the settlement of the real cost (written behind) —
 * which also ends the reservation when the call fails or the client goes away.
 *
 * It is its own KeyChoice (key-pools.ts): the affinity and tried keys that pick a pooled key.
 */
export class InferenceCall implements KeyChoice, AttemptPolicy<Attempt> {
  readonly generationId = generationId();
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private readonly deadline: NodeJS.Timeout;
  private settled = false;
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
  /** The observing door's record of the providers' time (wire/upstream-watch.ts); it hears of this call's abort itself. */
  private readonly watch: UpstreamWatch | undefined;

  private constructor(
    private readonly runtime: Engine,
    readonly context: CallerContext,
    private readonly request: CallRequest,
    readonly attempts: Attempt[],
    private readonly ticket: AdmissionTicket,
    private readonly endUser: string | null,
    /** A `flag` content filter matched the input: marked on the ledger row. */
    private readonly contentFlagged: boolean,
    private readonly ctx: HandlerContext,
    /** The cached answer that answers this call, if the cache had one: no attempt is made. */
    readonly cached?: CachedAnswer,
  ) {
    // One controller for the handler's abort, the deadline and close(): cheaper per call than
    // AbortSignal.any over AbortSignal.timeout, and every reason is a shared object.
    this.signal = this.controller.signal;
    this.requestId = ctx.requestHeader.get(REQUEST_ID_HEADER);
    if (ctx.signal.aborted) this.controller.abort(ctx.signal.reason);
    else ctx.signal.addEventListener("abort", this, { once: true });
    this.deadline = setTimeout(() => this.controller.abort(DEADLINE), runtime.config.requestTimeoutMs).unref();
    this.watch = ctx.values.get(upstreamWatchKey);
    if (this.watch) this.signal.addEventListener("abort", this.watch, { once: true });
  }

  /** The handler's signal fired (this object is its listener: no closure per call). */
  handleEvent(): void {
    this.controller.abort(this.ctx.signal.reason);
  }

  static async open(runtime: Engine, ctx: HandlerContext, request: CallRequest): Promise<InferenceCall> {
    const endUser = checkEndUser(request.user);
    const caller = callerOf(ctx);
    const context = await runtime.callerContext(caller);
    checkServerTools(request.serverTools, context.workspace);
    const filtering = filterCall(context.guardrails, request.api, request.bodies, runtime.config.contentFilterMaxBytes);
    countFiltering(runtime, filtering);
    // Refused before routing and admission: nothing is reserved, nothing is billed.
    if (filtering.blockedBy !== undefined) throw blockedError(filtering.blockedBy);
    const attempts = await runtime.plan(
      context,
      {
        modelIds: request.modelIds.length > 0 ? request.modelIds : [context.workspace.defaultTextModel ?? ""],
        api: request.api,
        preferences: request.preferences,
        parameters: request.parameters,
      },
      ctx.requestHeader.get("x-forwarded-host"),
    );
    const endpoints = attempts.map((a) => a.endpoint);
    const cached = await request.cache?.lookup(context, attempts[0]!, ctx.signal);
    const quantities = quantitiesFor(context, runtime.config, endpoints.every(isFreeEndpoint), new Date());
    // A cache hit costs nothing: it counts against the request rate limits only, never a budget or a token limit.
    const admitted = cached
      ? runtime.leases.admit(quantities.filter(isRateLimit), "0")
      : runtime.leases.admit(
          quantities,
          worstCaseCost(endpoints, request.promptTokens, request.completionTokens),
          worstCaseTokens(endpoints, request.promptTokens, request.completionTokens),
        );
    const [ticket] = await Promise.all([
      admitted.catch((err: unknown) => {
        // A 429 of a limit is a ledger row of its own (analytics groups 429s by limit).
        const limit = refusedLimit(err);
        if (limit) {
          const { api, streamed } = request;
          const refused = {
            generationId: generationId(),
            requestId: ctx.requestHeader.get(REQUEST_ID_HEADER),
            api,
            modelId: attempts[0]!.model.id,
            endUser,
            sessionId: request.sessionId ?? null,
            streamed,
          };
          recordRefusal(runtime, context, refused, limit);
        }
        throw err;
      }),
      endUser ? runtime.endUsers.register(context.caller.organization.id, endUser) : undefined,
    ]);
    // OpenAI's x-ratelimit-* headers, for the tightest request and token limits of the call.
    for (const [name, value] of Object.entries(rateLimitHeaders(ticket.readings())))
      ctx.responseHeader.set(name, value);
    const flagged = filtering.matched.some((filter) => filter.action === "flag");
    const call = new InferenceCall(runtime, context, request, attempts, ticket, endUser, flagged, ctx, cached);
    if (flagged) ctx.responseHeader.set(CONTENT_FLAGGED_HEADER, "true");
    logFlags(runtime, filtering, { requestId: call.requestId, generationId: call.generationId });
    return call;
  }

  /**
   * Runs `run` against each planned endpoint until one answers (endpoint-attempts.ts: this call is
   * the loop's policy). Each failed attempt the loop moves on from is recorded in the ledger, which
   * feeds endpoint uptime; the last failure, or a non-retryable one, settles the call and is thrown
   * as the API's error.
   */
  async attempt<T>(run: (target: UpstreamTarget, attempt: Attempt) => Promise<T>): Promise<Served<T>> {
    const outcome = await tryEndpoints(this.runtime, this.context, this.attempts, run, this);
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
    this.record(attempt, isByok, {
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
    this.record(
      this.attempts[0]!,
      false,
      { status: "success", httpStatus: 200, usage: cached.usage, latencyMs: 0, generationMs: 0 },
      true,
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
    return this.record(served.attempt, served.isByok, outcome, true);
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
    if (!this.settled) {
      this.record(
        attempt,
        isByok,
        {
          status: cancelled ? "cancelled" : "error",
          httpStatus: statusOf(error),
          usage,
          latencyMs: null,
          generationMs: elapsed(startedAt),
        },
        true,
      );
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
    clearTimeout(this.deadline);
    this.ctx.signal.removeEventListener("abort", this);
    this.controller.abort(CLOSED);
    // Deferred: a handler closing a call it is about to fail (with the tokens already produced)
    // records that failure first.
    setImmediate(() => {
      this.endSpan({ errorType: cancelled ? "cancelled" : OTHER_ERROR });
      if (this.settled) return;
      this.record(
        this.attempts[0]!,
        false,
        {
          status: cancelled ? "cancelled" : "error",
          httpStatus: cancelled ? 499 : 500,
          usage: NO_USAGE,
          latencyMs: null,
          generationMs: null,
        },
        true,
      );
    });
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
    logUpstreamFailure(this.runtime.log, {
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

  /** `cacheSavings`: for a cache hit, what the original call cost; the hit itself costs 0. */
  private record(attempt: Attempt, isByok: boolean, outcome: Outcome, final = false, cacheSavings?: string): string {
    const { caller } = this.context;
    const cost = cacheSavings === undefined ? costUsd(attempt.endpoint.pricing, outcome.usage) : "0";
    if (final) this.settled = true;
    const record: CallRecord = {
      generationId: this.generationId,
      organizationId: caller.organization.id,
      keyHash: caller.key.hash,
      workspaceId: caller.key.workspaceId,
      memberUserId: caller.key.creatorUserId,
      endUser: this.endUser,
      sessionId: this.request.sessionId ?? null,
      requestId: this.requestId,
      api: this.request.api,
      modelId: attempt.model.id,
      providerSlug: attempt.endpoint.providerSlug,
      endpointId: attempt.endpoint.id,
      status: outcome.status,
      httpStatus: outcome.httpStatus,
      streamed: this.request.streamed,
      promptTokens: outcome.usage.promptTokens,
      completionTokens: outcome.usage.completionTokens,
      reasoningTokens: outcome.usage.reasoningTokens,
      cachedTokens: outcome.usage.cachedTokens,
      cacheWriteTokens: outcome.usage.cacheWriteTokens ?? 0,
      contentFlagged: this.contentFlagged,
      ...(cacheSavings === undefined ? {} : { cacheHit: true, cacheSavingsUsd: cacheSavings }),
      costUsd: cost,
      isByok,
      isFree: isFreeEndpoint(attempt.endpoint),
      latencyMs: outcome.latencyMs,
      generationMs: outcome.generationMs,
      reservationId: null,
    };
    // Written behind: the answer does not wait for the database (settlement-writer.ts).
    this.runtime.settlement.enqueue(record, final ? this.ticket.settle(cost, usedTokens(outcome.usage)) : []);
    // Only the fallback path of attempt() records an attempt before the call is over.
    this.runtime.observers?.inference?.attemptRecorded(record, !final);
    return cost;
  }
}

/** Counts the filters that matched a call's input, by slug and action (the metrics' labels). */
export function countFiltering(deps: Pick<EngineParts, "observers">, { matched }: CallFiltering): void {
  for (const filter of matched) deps.observers?.inference?.contentFiltered(filter.slug, filter.action);
}

/**
 * One line per flag filter that matched, naming the guardrail and the filter (never the text):
 * the call went through, and this line and its ids are how an operator finds it.
 */
export function logFlags(
  deps: Pick<EngineParts, "log">,
  { matched }: CallFiltering,
  ids: { requestId: string | null; generationId: string },
): void {
  for (const filter of matched) {
    if (filter.action === "flag")
      deps.log.warn({ ...ids, guardrail: filter.guardrail, filter: filter.name }, "content filter flagged the input");
  }
}

/** Abort reasons, shared: an abort without one builds a DOMException and its stack on every call. */
const DEADLINE = new DOMException("The inference call's deadline passed", "TimeoutError");
const CLOSED = new DOMException("The inference call is over", "AbortError");
/** OpenTelemetry's `error.type` for a failure of no known kind. */
const OTHER_ERROR = "_OTHER";

export const NO_USAGE: UpstreamUsage = { promptTokens: 0, completionTokens: 0, reasoningTokens: 0, cachedTokens: 0 };

function statusOf(error: unknown): number {
  return error instanceof ConnectError ? httpErrorOf(error).status : 500;
}

function elapsed(startedAt: number): number {
  return Math.round(performance.now() - startedAt);
}

/** Random bytes drawn from a pool refilled 256 ids at a time: one system call per 256 calls. */
const ID_BYTES = 20;
const idPool = Buffer.alloc(ID_BYTES * 256);
let idOffset = idPool.length;

/** OpenRouter's form: `gen-<unix seconds>-<20 alphanumerics>`. */
function generationId(): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  if (idOffset + ID_BYTES > idPool.length) {
    randomFillSync(idPool);
    idOffset = 0;
  }
  let suffix = "";
  for (let i = idOffset; i < idOffset + ID_BYTES; i++) suffix += alphabet[idPool[i]! % alphabet.length];
  idOffset += ID_BYTES;
  return `gen-${Math.floor(Date.now() / 1000)}-${suffix}`;
}
