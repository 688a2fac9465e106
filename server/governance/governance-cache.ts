import type { Sequelize } from "sequelize";
import type { Caller } from "../core/auth.js";
import { activePrivateEndpoints } from "../catalog/private-endpoint-catalog.js";
import type { PrivateEndpointRow } from "../db/governance-models.js";
import { ApiKeyRow, OrganizationRow } from "../db/models.js";
import type { Logger } from "../logger.js";
import { watchGovernanceChanges } from "./governance-changes.js";
import { loadKeyGovernance, type KeyGovernance } from "./key-governance.js";

/**
 * Keys and their governance, kept in memory between requests: authentication and the governance
 * context are read on every inference call and change rarely. Any change to governance data
 * (governance-changes.ts) starts a new generation; an entry loaded in an older generation is never
 * served, including one whose load began before a change and finished after it. Entries also
 * expire after a while, a bound on staleness should a notification ever be lost or the feed be
 * down (entries loaded before an outage are served until they expire). What is spent is never
 * cached here: admission draws on leases (server/admission).
 */
export interface GovernanceCache {
  /** The key with this SHA-256 hash and its organization, or undefined. */
  caller(keyHash: string): Promise<Caller | undefined>;
  governance(caller: Caller): Promise<KeyGovernance>;
  /** An organization's active private endpoints (routing reads them on every call of an entitled organization). */
  privateEndpoints(organizationId: string): Promise<PrivateEndpointRow[]>;
  /** Whether the change feed listens; while it does not, nothing loaded is kept (readiness reports it). */
  feedLive(): boolean;
  close(): Promise<void>;
}

const TTL_MS = 30_000;
/** A bound on memory; past it the cache starts over rather than tracking recency. */
const MAX_ENTRIES = 10_000;

interface Entry<V> {
  generation: number;
  expiresAt: number;
  value: Promise<V>;
}

export async function createGovernanceCache(sequelize: Sequelize, databaseUrl: string, log: Logger): Promise<GovernanceCache> {
  let generation = 0;
  const changes = await watchGovernanceChanges(sequelize, databaseUrl, log, () => {
    generation++;
  });

  function memo<A, V>(load: (arg: A) => Promise<V>): (id: string, arg: A) => Promise<V> {
    const entries = new Map<string, Entry<V>>();
    return (id, arg) => {
      const now = Date.now();
      const hit = entries.get(id);
      if (hit && hit.generation === generation && hit.expiresAt > now) return hit.value;
      // Without the feed a fresh load could be missed by a later change: used once, not kept.
      if (!changes.live()) return load(arg);
      if (entries.size >= MAX_ENTRIES) entries.clear();
      const entry: Entry<V> = { generation, expiresAt: now + TTL_MS, value: load(arg) };
      entries.set(id, entry);
      // A failed load is not remembered.
      entry.value.catch(() => {
        if (entries.get(id) === entry) entries.delete(id);
      });
      return entry.value;
    };
  }

  const callers = memo(async (keyHash: string): Promise<Caller | undefined> => {
    const key = await ApiKeyRow.findByPk(keyHash, { include: [{ model: OrganizationRow, as: "organization" }] });
    return key?.organization ? { key, organization: key.organization } : undefined;
  });
  const governance = memo((caller: Caller) => loadKeyGovernance(sequelize, caller));
  const privateEndpoints = memo(activePrivateEndpoints);

  return {
    caller: (keyHash) => callers(keyHash, keyHash),
    governance: (caller) => governance(caller.key.hash, caller),
    privateEndpoints: (organizationId) => privateEndpoints(organizationId, organizationId),
    feedLive: () => changes.live(),
    close: () => changes.close(),
  };
}
