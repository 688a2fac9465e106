import type { Sequelize } from "sequelize";
import type { Caller } from "../../platform/rpc/auth.js";
import { activePrivateEndpoints } from "../catalog/private-endpoint-catalog.js";
import type { PrivateEndpointRow } from "../../platform/db/governance-models.js";
import { ApiKeyRow, OrganizationRow } from "../../platform/db/models.js";
import type { NotificationFeed } from "../../platform/db/notification-feed.js";
import { generationMemo, type Generations, type MemoBounds } from "./generation-memo.js";
import { watchGovernanceChanges } from "./governance-changes.js";
import { loadKeyGovernance, type KeyGovernance } from "./key-governance.js";

/**
 * Keys and their governance, kept in memory between requests: authentication and the governance
 * context are read on every inference call and change rarely. Any change to governance data
 * (governance-changes.ts) starts a new generation, and nothing loaded in an older one is served
 * (generation-memo.ts). Entries also expire after a while, a bound on staleness should the feed be
 * down (entries loaded before an outage are served until they expire). What is spent is never
 * cached here: admission draws on leases (server/engine/admission).
 */
export interface GovernanceCache {
  /** The key with this SHA-256 hash and its organization, or undefined. */
  caller(keyHash: string): Promise<Caller | undefined>;
  governance(caller: Caller): Promise<KeyGovernance>;
  /** An organization's active private endpoints (routing reads them on every call of an entitled organization). */
  privateEndpoints(organizationId: string): Promise<PrivateEndpointRow[]>;
  /** Whether the change feed listens; while it does not, nothing loaded is kept (readiness reports it). */
  feedLive(): boolean;
}

/** Entries expire after this; entries of each kind are bounded (generation-memo.ts). */
const BOUNDS: MemoBounds = { maxEntries: 10_000, maxUnknown: 10_000, ttlMs: 30_000 };

/** `feed`: the instance's notification feed, which carries the other instances' changes (governance-changes.ts). */
export function createGovernanceCache(sequelize: Sequelize, feed: NotificationFeed): GovernanceCache {
  let generation = 0;
  watchGovernanceChanges(sequelize, feed, () => {
    generation++;
  });
  const generations: Generations = { current: () => generation, live: () => feed.live() };
  const memo = <A, V>(load: (arg: A) => Promise<V>, known?: (value: V) => boolean) =>
    generationMemo(generations, BOUNDS, load, known);

  const callers = memo(
    async (keyHash: string): Promise<Caller | undefined> => {
      const key = await ApiKeyRow.findByPk(keyHash, { include: [{ model: OrganizationRow, as: "organization" }] });
      return key?.organization ? { key, organization: key.organization } : undefined;
    },
    (caller) => caller !== undefined,
  );
  const governance = memo((caller: Caller) => loadKeyGovernance(sequelize, caller));
  const privateEndpoints = memo(activePrivateEndpoints);

  return {
    caller: (keyHash) => callers(keyHash, keyHash),
    governance: (caller) => governance(caller.key.hash, caller),
    privateEndpoints: (organizationId) => privateEndpoints(organizationId, organizationId),
    feedLive: () => feed.live(),
  };
}
