import { leaseStoreOf } from "../admission/admission-store.js";
import { LeaseBook } from "../admission/lease-book.js";
import { createEndpointStatsCache } from "../catalog/endpoint-stats.js";
import { privateEndpointsOf } from "../catalog/private-endpoint-catalog.js";
import type { EngineDeps } from "../engine-deps.js";
import { EndUserRegistry } from "../governance/end-user-registration.js";
import { endpointAllowed, policyOf, regionalHostOf } from "../governance/endpoint-policy.js";
import type { CatalogEndpoint } from "../catalog/catalog.js";
import type { CallerContext } from "./caller-context.js";
import type { EndpointRanking } from "./routing.js";
import { createTargetResolver, type TargetResolver } from "./upstream-targets.js";
import { errorMessage } from "../../../wire/errors.js";

/** How often endpoint stats used for ranking are refreshed from the ledger. */
const STATS_TTL_MS = 10_000;
/** A lease stays counted this much past the longest call admitted under it, for its settlement to land. */
const SETTLEMENT_SLACK_MS = 60_000;

/**
 * The long-lived parts of inference, built once per instance (createInferenceRuntime) and shared by
 * every call, each by name: the engine's parts (the configuration, the log, the catalog, the
 * governance cache, the settlement writer, …) and the ones built here.
 */
export interface InferenceRuntime extends EngineDeps {
  /** This instance's admission leases. */
  leases: LeaseBook;
  /** End users this instance has registered lately (end-user-registration.ts). */
  endUsers: EndUserRegistry;
  resolveTarget: TargetResolver;
  ranking(endpointIds: string[]): Map<string, EndpointRanking>;
  /**
   * Why policy forbids an endpoint to this caller, or undefined: its guardrails, and the regional
   * hostname the request arrived on (`x-forwarded-host`, passed on by the facade).
   */
  refusalFor(context: CallerContext, host: string | null): (endpoint: CatalogEndpoint) => string | undefined;
  privateEndpoints(context: CallerContext, modelId: string): Promise<CatalogEndpoint[]>;
}

/** Builds the runtime; `owner` names this instance's leases. */
export function createInferenceRuntime(deps: EngineDeps, owner: string): InferenceRuntime {
  const { catalog, sequelize, log, config } = deps;
  const stats = createEndpointStatsCache(sequelize, STATS_TTL_MS, (err) =>
    log.warn({ err: errorMessage(err) }, "endpoint stats refresh failed"),
  );
  const settings = { ...config.leases, holdMs: config.requestTimeoutMs + SETTLEMENT_SLACK_MS };
  const store = leaseStoreOf(sequelize, owner, { leaseS: settings.leaseMs / 1000, holdS: settings.holdMs / 1000 });
  const admission = new LeaseBook(store, settings, log, (n) => deps.settlement.hasRoom(n), deps.observers?.admission);
  admission.start();
  return {
    ...deps,
    leases: admission,
    endUsers: new EndUserRegistry(sequelize),
    resolveTarget: createTargetResolver(deps),
    ranking(endpointIds) {
      const known = stats.peek(endpointIds);
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
    },
    refusalFor(context, host) {
      const policy = policyOf(context.guardrails, catalog, regionalHostOf(catalog, host));
      return (endpoint) => {
        const verdict = endpointAllowed(policy, endpoint);
        return verdict.allowed ? undefined : verdict.reason;
      };
    },
    async privateEndpoints(context, modelId) {
      // Only organizations in the programme have any; theirs come from the governance cache.
      if (!context.caller.organization.entitlements.includes("private_endpoints")) return [];
      return privateEndpointsOf(
        catalog,
        await deps.governance.privateEndpoints(context.caller.organization.id),
        modelId,
      );
    },
  };
}
