import { leaseStoreOf } from "../engine/admission/admission-store.js";
import { LeaseBook } from "../engine/admission/lease-book.js";
import { createEndpointStatsCache } from "../engine/catalog/endpoint-stats.js";
import { Engine, type EngineParts } from "../engine/engine.js";
import { EndUserRegistry } from "../engine/governance/end-user-registration.js";
import { createTargetResolver } from "../engine/inference/upstream-targets.js";
import { errorMessage } from "../../wire/errors.js";
import type { LocalSecrets } from "../platform/secrets/local-secrets.js";

/** How often endpoint stats used for ranking are refreshed from the ledger. */
const STATS_TTL_MS = 10_000;
/** A lease stays counted this much past the longest call admitted under it, for its settlement to land. */
const SETTLEMENT_SLACK_MS = 60_000;

/** The instance's long-lived parts the engine is made of; the rest are made here. */
export type EngineInputs = Omit<EngineParts, "leases" | "endUsers" | "resolveTarget" | "stats"> & {
  /** The master key that opens workspaces' own provider keys (BYOK). */
  secrets: LocalSecrets;
};

/**
 * Builds this instance's engine from its parts, each by name: the long-lived ones of the instance
 * (`deps`) and the ones made here (the admission leases, the end-user registry, endpoint stats,
 * target resolution). `owner` names this instance's leases. The leases start renewing at once.
 */
export function assembleEngine(deps: EngineInputs, owner: string): Engine {
  const { sequelize, log, config } = deps;
  const stats = createEndpointStatsCache(sequelize, STATS_TTL_MS, (err) =>
    log.warn({ err: errorMessage(err) }, "endpoint stats refresh failed"),
  );
  const settings = { ...config.leases, holdMs: config.requestTimeoutMs + SETTLEMENT_SLACK_MS };
  const store = leaseStoreOf(sequelize, owner, { leaseS: settings.leaseMs / 1000, holdS: settings.holdMs / 1000 });
  const leases = new LeaseBook(store, settings, log, (n) => deps.settlement.hasRoom(n), deps.observers?.admission);
  leases.start();
  return new Engine({
    config,
    log,
    sequelize,
    catalog: deps.catalog,
    governance: deps.governance,
    leases,
    endUsers: new EndUserRegistry(sequelize),
    resolveTarget: createTargetResolver(deps),
    keyPools: deps.keyPools,
    responseCache: deps.responseCache,
    settlement: deps.settlement,
    stats,
    observers: deps.observers,
  });
}
