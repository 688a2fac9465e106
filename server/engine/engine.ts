import type { HandlerContext } from "@connectrpc/connect";
import type { Sequelize } from "sequelize";
import type { GatewayConfig } from "../platform/config.js";
import type { Caller } from "../platform/rpc/auth.js";
import type { Logger } from "../platform/logger.js";
import { admit, type Admission, type AdmissionRequest } from "./admission/exact-admission.js";
import type { AdmissionObserver } from "./admission/admission-observer.js";
import type { LeaseBook } from "./admission/lease-book.js";
import type { Catalog, CatalogEndpoint } from "./catalog/catalog.js";
import type { EndpointStatsCache } from "./catalog/endpoint-stats.js";
import { privateEndpointsOf } from "./catalog/private-endpoint-catalog.js";
import type { EndUserRegistry } from "./governance/end-user-registration.js";
import { endpointAllowed, policyOf, regionalHostnameOf } from "./governance/endpoint-policy.js";
import type { GovernanceCache } from "./governance/governance-cache.js";
import type { CallerContext } from "./inference/caller-context.js";
import {
  tryEndpoints,
  type AttemptPolicy,
  type EndpointAttempt,
  type FailedAttempt,
  type Served,
} from "./inference/endpoint-attempts.js";
import { openCall } from "./inference/call-opening.js";
import type { CallRequest } from "./inference/call-request.js";
import type { InferenceCall } from "./inference/inference-call.js";
import type { InferenceObserver } from "./inference/inference-observer.js";
import { planRoute, type Attempt, type EndpointRanking, type RouteInput } from "./inference/routing.js";
import type { TargetResolver } from "./inference/upstream-targets.js";
import type { KeyPools } from "./key-pools/key-pools.js";
import type { UpstreamTarget } from "./providers/provider.js";
import type { ResponseCache } from "./response-cache/response-cache.js";
import type { SettlementWriter } from "./usage/settlement-writer.js";

/**
 * What the engine is made of, each by name (as River's JobExecutor lists what it needs): the
 * composition (server/app/engine-assembly.ts) builds one of each per instance.
 */
export interface EngineParts {
  config: GatewayConfig;
  log: Logger;
  /** Exact admission's reservations (batches, videos) are one round trip to Postgres. */
  sequelize: Sequelize;
  /** The model catalog of GATEWAY_CONFIG, as synchronized into Postgres at start. */
  catalog: Catalog;
  /** Keys and their governance, cached between requests and dropped on any change. */
  governance: GovernanceCache;
  /** This instance's admission leases. */
  leases: LeaseBook;
  /** End users this instance has registered lately (end-user-registration.ts). */
  endUsers: EndUserRegistry;
  /** Where an attempt goes and with whose key (upstream-targets.ts). */
  resolveTarget: TargetResolver;
  /** The key pools of the providers that list several keys, and their health. */
  keyPools: KeyPools;
  /** Cached answers, for the calls that ask for them (x-gateway-cache-ttl). */
  responseCache: ResponseCache;
  /** Answered calls' ledger rows, written behind in group commits; reads of usage wait on its barrier. */
  settlement: SettlementWriter;
  /** Recent latency, throughput and uptime of the endpoints, for ranking. */
  stats: EndpointStatsCache;
  /** Who is told of inference attempts and admission decisions (the metrics); none in some rigs. */
  observers?: { inference?: InferenceObserver; admission?: AdmissionObserver };
}

/** What a route is planned from, besides the caller: the rest comes from the engine's parts. */
export type PlanRequest = Pick<RouteInput, "modelIds" | "api" | "preferences" | "parameters">;

/**
 * The engine's face: the verbs services use, over the parts it is made of. A service asks for the
 * caller's governance (`callerContext`), a route (`plan`), tries it (`tryEndpoints`), or opens a
 * live call that does all of it and settles (`open`); exact reservations are `reserve`.
 */
export class Engine {
  readonly config: GatewayConfig;
  readonly log: Logger;
  readonly catalog: Catalog;
  readonly governance: GovernanceCache;
  readonly leases: LeaseBook;
  readonly endUsers: EndUserRegistry;
  readonly resolveTarget: TargetResolver;
  readonly keyPools: KeyPools;
  readonly responseCache: ResponseCache;
  readonly settlement: SettlementWriter;
  readonly observers: EngineParts["observers"];
  private readonly parts: EngineParts;

  constructor(parts: EngineParts) {
    this.parts = parts;
    this.config = parts.config;
    this.log = parts.log;
    this.catalog = parts.catalog;
    this.governance = parts.governance;
    this.leases = parts.leases;
    this.endUsers = parts.endUsers;
    this.resolveTarget = parts.resolveTarget;
    this.keyPools = parts.keyPools;
    this.responseCache = parts.responseCache;
    this.settlement = parts.settlement;
    this.observers = parts.observers;
  }

  /** The caller and what governs its key (guardrails, budgets, workspace), from the governance cache. */
  async callerContext(caller: Caller): Promise<CallerContext> {
    return { ...(await this.governance.governance(caller)), caller };
  }

  /**
   * The ordered attempts of a call under the caller's policy: its guardrails, the regional hostname
   * the request arrived on (`host`, passed on by the facade as `x-forwarded-host`), its workspace's
   * default sort and its organization's private endpoints. Throws the API's error when none is left.
   */
  plan(context: CallerContext, request: PlanRequest, host: string | null): Promise<Attempt[]> {
    return planRoute({
      ...request,
      catalog: this.catalog,
      defaultSort: context.workspace.defaultProviderSort,
      privateEndpoints: (modelId) => this.privateEndpoints(context, modelId),
      refusal: this.refusalFor(context, host),
      ranking: this.ranking,
    });
  }

  /** Tries planned endpoints in turn under `policy` (inference/endpoint-attempts.ts). */
  tryEndpoints<A extends EndpointAttempt, T>(
    context: CallerContext,
    attempts: readonly A[],
    run: (target: UpstreamTarget, attempt: A) => Promise<T>,
    policy: AttemptPolicy<A>,
  ): Promise<Served<T, A> | FailedAttempt<A> | undefined> {
    return tryEndpoints(this, context, attempts, run, policy);
  }

  /** Opens a live call: governance, content filters, route, cache, admission (inference/inference-call.ts). */
  open(ctx: HandlerContext, request: CallRequest): Promise<InferenceCall> {
    return openCall(this, ctx, request);
  }

  /** Reserves a submission's worst case in one round trip (batches, videos: admission/exact-admission.ts). */
  reserve(context: CallerContext, request: AdmissionRequest): Promise<Admission> {
    return admit(this.parts, context, request);
  }

  /** Why policy forbids an endpoint to this caller, or undefined: its guardrails and the regional hostname. */
  refusalFor(context: CallerContext, host: string | null): (endpoint: CatalogEndpoint) => string | undefined {
    const policy = policyOf(context.guardrails, this.catalog, regionalHostnameOf(this.catalog, host));
    return (endpoint) => {
      const verdict = endpointAllowed(policy, endpoint);
      return verdict.allowed ? undefined : verdict.reason;
    };
  }

  /** The caller organization's active private endpoints of a model (only organizations in the programme have any). */
  async privateEndpoints(context: CallerContext, modelId: string): Promise<CatalogEndpoint[]> {
    if (!context.caller.organization.entitlements.includes("private_endpoints")) return [];
    return privateEndpointsOf(
      this.catalog,
      await this.governance.privateEndpoints(context.caller.organization.id),
      modelId,
    );
  }

  /** Recent behaviour of endpoints as ranking sees it (bound: routing calls it as a function). */
  readonly ranking = (endpointIds: string[]): Map<string, EndpointRanking> => {
    const known = this.parts.stats.peek(endpointIds);
    return new Map(
      [...known].map(([id, s]) => [
        id,
        {
          latencyP50: s.latencyLast30m?.p50 ?? null,
          throughputP50: s.throughputLast30m?.p50 ?? null,
          uptime5m: s.uptimeLast5m,
        },
      ]),
    );
  };
}
