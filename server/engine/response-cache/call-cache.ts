import type { JsonObject } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { CACHE_STATUS_HEADER, type CacheStatus } from "../../../wire/cache-headers.js";
import type { GatewayConfig } from "../../platform/config.js";
import { demandsZdr } from "../governance/endpoint-policy.js";
import type { ApplyingGuardrail } from "../governance/applying-guardrails.js";
import type { CacheCaller, CacheProbe } from "../inference/call-request.js";
import type { Attempt } from "../inference/routing.js";
import type { UpstreamUsage } from "../providers/provider.js";
import type { CachedAnswer } from "./cached-answer.js";
import { cacheKey, type CacheScope } from "./cache-key.js";
import { cacheOrderOf, type CacheOrder } from "./cache-order.js";
import type { CacheFlight, ResponseCache } from "./response-cache.js";

/**
 * One call's use of the response cache: the lookup for the route's first endpoint (a hit, or the
 * flight this call leads), the answer stored under the endpoint that gave it, and the flight
 * landed whatever happens. Every cacheable answer says what the cache did in `x-gateway-cache`:
 * `hit`; `miss` (looked up, then answered upstream and stored, unless larger than
 * GATEWAY_CACHE_MAX_ENTRY_BYTES); `bypass` (not looked up: no TTL was asked for and the workspace
 * has no default, a guardrail of the caller demands zero data retention for the model (nothing
 * stored either), or `Cache-Control: no-cache`, which stores the fresh answer).
 */
export class CallCache implements CacheProbe {
  private workspaceId = "";
  private guardrails: readonly ApplyingGuardrail[] = [];
  private ttlS = 0;
  private flight: CacheFlight | undefined;

  private constructor(
    private readonly cache: ResponseCache,
    /** What the request asked (undefined: no TTL header; the workspace's default decides). */
    private readonly order: CacheOrder | undefined,
    private readonly config: GatewayConfig,
    private readonly api: CacheScope["api"],
    private readonly body: JsonObject,
    private readonly ctx: HandlerContext,
  ) {}

  /** The call's use of the cache; a bad `x-gateway-cache-ttl` is a 400 before anything else. */
  static of(
    deps: { responseCache: ResponseCache; config: GatewayConfig },
    ctx: HandlerContext,
    api: CacheScope["api"],
    body: JsonObject,
  ): CallCache {
    return new CallCache(
      deps.responseCache,
      cacheOrderOf(ctx.requestHeader, deps.config.cache.maxTtlSeconds),
      deps.config,
      api,
      body,
      ctx,
    );
  }

  /**
   * Once routing has chosen the first endpoint: the TTL is the request's, else the workspace's
   * default (capped at GATEWAY_CACHE_MAX_TTL_SECONDS); without either nothing is read or written.
   * Nor when a guardrail of the caller (its own, its member's or its workspace's default) demands
   * zero data retention for the model: a stored answer would be retained data, whatever the TTL.
   * A call waits for an identical one's flight at most as long as it may run itself.
   */
  async lookup(
    { workspace, guardrails }: CacheCaller,
    first: Attempt,
    signal: AbortSignal,
  ): Promise<CachedAnswer | undefined> {
    this.workspaceId = workspace.id;
    this.guardrails = guardrails;
    this.ttlS = this.order?.ttlS ?? Math.min(workspace.cacheTtlSeconds ?? 0, this.config.cache.maxTtlSeconds);
    if (this.ttlS > 0 && demandsZdr(guardrails, first.model.id)) this.ttlS = 0;
    if (this.ttlS === 0 || this.order?.refresh) return this.said("bypass", undefined);
    const found = await this.cache.lookup(cacheKey(this.scope(first), this.body), signal, this.config.requestTimeoutMs);
    if ("hit" in found) return this.said("hit", found.hit);
    this.flight = found.flight;
    return this.said("miss", undefined);
  }

  /** Whether the answer will be stored (the call asked for the cache): a stream is assembled only then. */
  get storing(): boolean {
    return this.ttlS > 0;
  }

  /**
   * Stores a successful answer under the endpoint that gave it (when the call asked for the cache);
   * a fallback to a model whose calls a guardrail keeps from retention is not stored either.
   */
  store(served: Attempt, answer: JsonObject, usage: UpstreamUsage, costUsd: string, created: number): void {
    if (this.ttlS === 0 || demandsZdr(this.guardrails, served.model.id)) return;
    const scope = this.scope(served);
    this.cache.store(
      cacheKey(scope, this.body),
      scope,
      { answer, usage, costUsd, endpointId: served.endpoint.id, created },
      this.ttlS,
    );
  }

  /** The waiting identical calls look again (after a store, or a failure). */
  land(): void {
    this.flight?.land();
    this.flight = undefined;
  }

  private scope(attempt: Attempt): CacheScope {
    return { workspaceId: this.workspaceId, api: this.api, modelId: attempt.model.id, endpointId: attempt.endpoint.id };
  }

  private said<T>(status: CacheStatus, value: T): T {
    this.ctx.responseHeader.set(CACHE_STATUS_HEADER, status);
    return value;
  }
}
