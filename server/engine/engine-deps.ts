import type { Sequelize } from "sequelize";
import type { GatewayConfig } from "../platform/config.js";
import type { LocalSecrets } from "../platform/secrets/local-secrets.js";
import type { NotificationFeed } from "../platform/db/notification-feed.js";
import type { Logger } from "../platform/logger.js";
import type { AdmissionObserver } from "./admission/admission-observer.js";
import type { Catalog } from "./catalog/catalog.js";
import type { GovernanceCache } from "./governance/governance-cache.js";
import type { InferenceObserver } from "./inference/inference-observer.js";
import type { KeyPools } from "./key-pools/key-pools.js";
import type { ResponseCache } from "./response-cache/response-cache.js";
import type { SettlementWriter } from "./usage/settlement-writer.js";

/**
 * What the engine is built from: the platform's parts and the engine's own long-lived ones. The
 * engine names nothing of the services or of the composition; the services' `Deps`
 * (server/services/deps.ts) extends this, and server/app/ builds one value of it per instance.
 */
export interface EngineDeps {
  config: GatewayConfig;
  log: Logger;
  sequelize: Sequelize;
  secrets: LocalSecrets;
  /** The model catalog of GATEWAY_CONFIG, as synchronized into Postgres at start. */
  catalog: Catalog;
  /** Keys and their governance, cached between requests and dropped on any change. */
  governance: GovernanceCache;
  /** Word from the other instances (PostgreSQL LISTEN): governance changes, key pool health. */
  notifications: NotificationFeed;
  /** The key pools of the providers that list several keys, and their health. */
  keyPools: KeyPools;
  /** Cached answers, for the calls that ask for them (x-gateway-cache-ttl). */
  responseCache: ResponseCache;
  /** Answered calls' ledger rows, written behind in group commits; reads of usage wait on its barrier. */
  settlement: SettlementWriter;
  /**
   * Who is told of inference attempts and admission decisions (the metrics, server/app/metrics.ts);
   * none in some rigs.
   */
  observers?: { inference?: InferenceObserver; admission?: AdmissionObserver };
}
