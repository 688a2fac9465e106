import { randomBytes } from "node:crypto";
import { ConnectError, type HandlerContext } from "@connectrpc/connect";
import type { ProviderPreferences } from "../../gen/gateway/v1/inference_pb.js";
import type { CatalogEndpoint } from "../catalog/catalog.js";
import { isFreeEndpoint } from "../catalog/catalog.js";
import { callerOf } from "../core/auth.js";
import { gatewayError, httpErrorOf } from "../core/errors.js";
import { costUsd } from "../core/money.js";
import type { Deps } from "../deps.js";
import { checkEndUser, registerEndUser } from "../end-users/end-user-registration.js";
import { UpstreamError, type UpstreamTarget, type UpstreamUsage } from "../providers/provider.js";
import { settleCall, type CallRecord } from "../usage/usage-ledger.js";
import { admit } from "./admission.js";
import type { CallerContext } from "./caller-context.js";
import { worstCaseCost } from "./cost-estimate.js";
import { planRoute, type Attempt, type EndpointRanking, type InferenceApi } from "./routing.js";
import { checkServerTools } from "./server-tools.js";
import { isRetryable, toGatewayError } from "./upstream-errors.js";
import type { TargetResolver } from "./upstream-targets.js";

/**
 * One inference call from admission to settlement, shared by chat completions and embeddings:
 * load the caller's governance context, refuse what policy forbids, plan the route, reserve the
 * worst-case cost (with the rate limit and free-model quota, one round trip), try the endpoints in
 * order with fallbacks on retryable failures, and settle the real cost into the ledger — or
 * release the reservation when the call fails or the client goes away.
 */
export interface InferenceRuntime {
  deps: Deps;
  resolveTarget: TargetResolver;
  ranking(endpointIds: string[]): Map<string, EndpointRanking>;
  /**
   * Why policy forbids an endpoint to this caller, or undefined: its guardrails, and the regional
   * hostname the request arrived on (`x-forwarded-host`, passed on by the facade).
   */
  refusalFor(context: CallerContext, host: string | null): (endpoint: CatalogEndpoint) => string | undefined;
  privateEndpoints(context: CallerContext, modelId: string): Promise<CatalogEndpoint[]>;
}

export interface CallRequest {
  api: InferenceApi;
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
}

/** The attempt that answered. */
export interface Served<T> {
  value: T;
  attempt: Attempt;
  isByok: boolean;
  startedAt: number;
  /** Milliseconds from sending the attempt to its first answer byte (whole answer when not streamed). */
  latencyMs: number;
}

export interface Outcome {
  status: CallRecord["status"];
  httpStatus: number;
  usage: UpstreamUsage;
  latencyMs: number | null;
  generationMs: number | null;
}

export class InferenceCall {
  readonly generationId = generationId();
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private settled = false;

  private constructor(
    private readonly runtime: InferenceRuntime,
    readonly context: CallerContext,
    private readonly request: CallRequest,
    readonly attempts: Attempt[],
    private readonly reservationId: string | null,
    private readonly endUser: string | null,
    handlerSignal: AbortSignal,
  ) {
    this.signal = AbortSignal.any([handlerSignal, this.controller.signal, AbortSignal.timeout(runtime.deps.config.requestTimeoutMs)]);
  }

  static async open(runtime: InferenceRuntime, ctx: HandlerContext, request: CallRequest): Promise<InferenceCall> {
    const { deps } = runtime;
    const endUser = checkEndUser(request.user);
    const caller = callerOf(ctx);
    const context: CallerContext = { ...(await deps.governance.governance(caller)), caller };
    checkServerTools(request.serverTools, context.workspace);
    const attempts = await planRoute({
      catalog: deps.catalog,
      modelIds: request.modelIds.length > 0 ? request.modelIds : [context.workspace.defaultTextModel ?? ""],
      api: request.api,
      preferences: request.preferences,
      defaultSort: context.workspace.defaultProviderSort,
      parameters: request.parameters,
      privateEndpoints: (modelId) => runtime.privateEndpoints(context, modelId),
      refusal: runtime.refusalFor(context, ctx.requestHeader.get("x-forwarded-host")),
      ranking: runtime.ranking,
    });
    const endpoints = attempts.map((a) => a.endpoint);
    const organizationId = context.caller.organization.id;
    const [admission] = await Promise.all([
      admit(deps, context, {
        estimateUsd: worstCaseCost(endpoints, request.promptTokens, request.completionTokens),
        free: endpoints.every(isFreeEndpoint),
      }),
      endUser ? registerEndUser(deps.sequelize, organizationId, endUser) : undefined,
    ]);
    return new InferenceCall(runtime, context, request, attempts, admission.reservationId, endUser, ctx.signal);
  }

  /**
   * Runs `run` against each planned endpoint until one answers. A retryable failure moves on to the
   * next endpoint (each failed attempt is recorded in the ledger, which feeds endpoint uptime);
   * the last failure, or a non-retryable one, settles the call and is thrown as the spec's error.
   */
  async attempt<T>(run: (target: UpstreamTarget, attempt: Attempt) => Promise<T>): Promise<Served<T>> {
    let failure: ConnectError | undefined;
    for (const [index, attempt] of this.attempts.entries()) {
      const startedAt = performance.now();
      let isByok = false;
      try {
        const resolved = await this.runtime.resolveTarget(this.context, attempt.endpoint);
        isByok = resolved.isByok;
        try {
          const value = await run(resolved.target, attempt);
          return { value, attempt, isByok, startedAt, latencyMs: Math.round(performance.now() - startedAt) };
        } finally {
          resolved.release();
        }
      } catch (err) {
        const upstream = err instanceof UpstreamError ? err : undefined;
        if (!upstream || this.signal.aborted) throw await this.fail(err, attempt, isByok, startedAt);
        failure = toGatewayError(upstream, attempt.endpoint.providerName);
        const last = index === this.attempts.length - 1;
        if (last || !isRetryable(upstream)) throw await this.fail(failure, attempt, isByok, startedAt);
        await this.record(attempt, isByok, { status: "error", httpStatus: statusOf(failure), usage: NO_USAGE, latencyMs: null, generationMs: elapsed(startedAt) });
      }
    }
    throw failure ?? gatewayError(502, "No endpoint could serve the request");
  }

  /** Records the served call with its real cost and releases the reservation; returns the cost. */
  async settle(served: Served<unknown>, outcome: Outcome): Promise<string> {
    return this.record(served.attempt, served.isByok, outcome, true);
  }

  /**
   * Turns a failure into the error the caller sees and settles the call: an abort by the client is
   * `cancelled` (499), the deadline 504, anything else as mapped. Tokens already produced count.
   */
  async fail(err: unknown, attempt: Attempt, isByok: boolean, startedAt: number, usage: UpstreamUsage = NO_USAGE): Promise<unknown> {
    const error = this.errorFor(err, attempt);
    const cancelled = statusOf(error) === 499;
    if (!this.settled) {
      await this.record(attempt, isByok, { status: cancelled ? "cancelled" : "error", httpStatus: statusOf(error), usage, latencyMs: null, generationMs: elapsed(startedAt) }, true);
    }
    return error;
  }

  /** Ends the call: aborts the upstream request if it is still open. */
  close(): void {
    this.controller.abort();
  }

  private errorFor(err: unknown, attempt: Attempt): unknown {
    if (this.signal.aborted) {
      const reason: unknown = this.signal.reason;
      if (reason instanceof DOMException && reason.name === "TimeoutError") return gatewayError(504, "Operation aborted due to timeout", { retryable: true });
      return gatewayError(499, "Request cancelled by the client");
    }
    return err instanceof UpstreamError ? toGatewayError(err, attempt.endpoint.providerName) : err;
  }

  private async record(attempt: Attempt, isByok: boolean, outcome: Outcome, final = false): Promise<string> {
    const { caller } = this.context;
    const cost = costUsd(attempt.endpoint.pricing, outcome.usage);
    if (final) this.settled = true;
    const record: CallRecord = {
      generationId: this.generationId,
      organizationId: caller.organization.id,
      keyHash: caller.key.hash,
      workspaceId: caller.key.workspaceId,
      memberUserId: caller.key.creatorUserId,
      endUser: this.endUser,
      sessionId: this.request.sessionId ?? null,
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
      costUsd: cost,
      isByok,
      isFree: isFreeEndpoint(attempt.endpoint),
      latencyMs: outcome.latencyMs,
      generationMs: outcome.generationMs,
      reservationId: final ? this.reservationId : null,
    };
    try {
      await settleCall(this.runtime.deps.sequelize, record);
    } catch (err) {
      // The answer was produced; losing it to a ledger outage would be worse than a missing row.
      // The reservation lapses on its own. Logged with ids only.
      this.runtime.deps.log.error({ generation: this.generationId, err: (err as Error).message }, "usage could not be recorded");
    }
    return cost;
  }
}

export const NO_USAGE: UpstreamUsage = { promptTokens: 0, completionTokens: 0, reasoningTokens: 0, cachedTokens: 0 };

function statusOf(error: unknown): number {
  return error instanceof ConnectError ? httpErrorOf(error).status : 500;
}

function elapsed(startedAt: number): number {
  return Math.round(performance.now() - startedAt);
}

/** OpenRouter's form: `gen-<unix seconds>-<20 alphanumerics>`. */
function generationId(): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  const bytes = randomBytes(20);
  let suffix = "";
  for (const byte of bytes) suffix += alphabet[byte % alphabet.length];
  return `gen-${Math.floor(Date.now() / 1000)}-${suffix}`;
}
