import type { Sequelize } from "sequelize";
import type { GovernanceCache } from "../engine/governance/governance-cache.js";
import type { Logger } from "../platform/logger.js";
import { errorMessage } from "../../wire/errors.js";

/**
 * Whether this instance should be sent traffic: its database answers, its governance change feed
 * listens (without it every request reloads keys and governance from the database), and it is not
 * draining. One object behind both probes, `GET /readyz` (health-endpoints.ts) and gRPC's
 * `grpc.health.v1.Health`, so the two never disagree.
 */
export interface Readiness {
  check(): Promise<ReadinessReport>;
  /** From now on the instance is not ready (SIGTERM: the load balancer stops sending before the listeners close). */
  startDraining(): void;
  draining(): boolean;
}

/** The gateway checks database, governance_feed and draining; a split facade its core and draining. */
export type ReadinessCheckName = "database" | "governance_feed" | "core" | "draining";

/** `ok` says the check passes; `reason` says why it does not (no SQL text, no address with credentials). */
export interface CheckResult {
  ok: boolean;
  reason?: string;
}

export interface ReadinessReport {
  ready: boolean;
  checks: Partial<Record<ReadinessCheckName, CheckResult>>;
}

export interface ReadinessSources {
  sequelize: Pick<Sequelize, "query">;
  governance: Pick<GovernanceCache, "feedLive">;
  log: Logger;
  /** How long `SELECT 1` may take before the database counts as unreachable. */
  databaseTimeoutMs?: number;
  /** How long one database answer stands for the next probes (probes from several balancers stay one query). */
  databaseCacheMs?: number;
}

const DATABASE_TIMEOUT_MS = 1_000;
const DATABASE_CACHE_MS = 1_000;

export function createReadiness(sources: ReadinessSources): Readiness {
  const timeoutMs = sources.databaseTimeoutMs ?? DATABASE_TIMEOUT_MS;
  const cacheMs = sources.databaseCacheMs ?? DATABASE_CACHE_MS;
  let draining = false;
  let last: { result: CheckResult; at: number } | undefined;
  // One probe query at a time: a hanging database must not collect a query per probe.
  let inFlight: Promise<CheckResult> | undefined;

  const probeDatabase = async (): Promise<CheckResult> => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<CheckResult>((resolve) => {
      timer = setTimeout(
        () => resolve({ ok: false, reason: `no answer to SELECT 1 within ${timeoutMs} ms` }),
        timeoutMs,
      );
      timer.unref();
    });
    const query = sources.sequelize.query("SELECT 1").then(
      (): CheckResult => ({ ok: true }),
      (err: unknown): CheckResult => {
        sources.log.warn({ err: errorMessage(err) }, "readiness: the database did not answer");
        return { ok: false, reason: "unreachable" };
      },
    );
    try {
      return await Promise.race([query, timeout]);
    } finally {
      clearTimeout(timer);
    }
  };

  const database = (): Promise<CheckResult> => {
    if (last && Date.now() - last.at < cacheMs) return Promise.resolve(last.result);
    inFlight ??= probeDatabase().then((result) => {
      last = { result, at: Date.now() };
      inFlight = undefined;
      return result;
    });
    return inFlight;
  };

  return {
    async check() {
      const checks: ReadinessReport["checks"] = {
        database: await database(),
        governance_feed: sources.governance.feedLive()
          ? { ok: true }
          : { ok: false, reason: "the LISTEN connection is down; reconnecting" },
        draining: draining ? { ok: false, reason: "shutting down" } : { ok: true },
      };
      return { ready: Object.values(checks).every((c) => c.ok), checks };
    },
    startDraining() {
      draining = true;
    },
    draining: () => draining,
  };
}
