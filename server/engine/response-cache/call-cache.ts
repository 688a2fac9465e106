import type { JsonObject } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { CACHE_STATUS_HEADER, type CacheStatus } from "../../../wire/cache-headers.js";
import type { GatewayConfig } from "../../platform/config.js";
import type { CacheProbe } from "../inference/inference-call.js";
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
 * `hit`; `miss` (looked up, then answered upstream and stored); `bypass` (not looked up: no TTL
 * was asked for, or `Cache-Control: no-cache`, which stores the fresh answer).
 */
export class CallCache implements CacheProbe {
  private workspaceId = "";
  private flight: CacheFlight | undefined;

  private constructor(
    private readonly cache: ResponseCache,
    private readonly order: CacheOrder,
    private readonly api: CacheScope["api"],
    private readonly body: JsonObject,
    private readonly ctx: HandlerContext,
    private readonly waitMs: number,
  ) {}

  /**
   * The call's use of the cache, or undefined when the request asks for none (then `bypass`). A
   * call waits for an identical one's flight at most as long as it may run itself.
   */
  static of(deps: { responseCache: ResponseCache; config: GatewayConfig }, ctx: HandlerContext, api: CacheScope["api"], body: JsonObject): CallCache | undefined {
    const order = cacheOrderOf(ctx.requestHeader, deps.config.cache.maxTtlSeconds);
    if (order === undefined) {
      ctx.responseHeader.set(CACHE_STATUS_HEADER, "bypass" satisfies CacheStatus);
      return undefined;
    }
    return new CallCache(deps.responseCache, order, api, body, ctx, deps.config.requestTimeoutMs);
  }

  async lookup(workspaceId: string, first: Attempt, signal: AbortSignal): Promise<CachedAnswer | undefined> {
    this.workspaceId = workspaceId;
    if (this.order.refresh) return this.said("bypass", undefined);
    // Waiting for an identical call's flight is bounded like the call itself would have been.
    const found = await this.cache.lookup(cacheKey(this.scope(first), this.body), signal, this.waitMs);
    if ("hit" in found) return this.said("hit", found.hit);
    this.flight = found.flight;
    return this.said("miss", undefined);
  }

  /** Stores a successful answer under the endpoint that gave it. */
  store(served: Attempt, answer: JsonObject, usage: UpstreamUsage, costUsd: string, created: number): void {
    const scope = this.scope(served);
    this.cache.store(cacheKey(scope, this.body), scope, { answer, usage, costUsd, endpointId: served.endpoint.id, created }, this.order.ttlS);
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
