import type { Sequelize } from "sequelize";
import type { AdmissionObserver } from "./admission/admission-observer.js";
import type { Catalog } from "./catalog/catalog.js";
import type { GatewayConfig } from "./config.js";
import type { LocalSecrets } from "./core/local-secrets.js";
import type { GovernanceCache } from "./governance/governance-cache.js";
import type { InferenceObserver } from "./inference/inference-observer.js";
import type { InternHosts } from "./interns/intern-hosts.js";
import type { Logger } from "./logger.js";
import type { BlobStore } from "./storage/blob-store.js";
import type { SettlementWriter } from "./usage/settlement-writer.js";

/** What service implementations are built from. */
export interface Deps {
  config: GatewayConfig;
  log: Logger;
  sequelize: Sequelize;
  secrets: LocalSecrets;
  /** The model catalog of GATEWAY_CONFIG, as synchronized into Postgres at start. */
  catalog: Catalog;
  /** Keys and their governance, cached between requests and dropped on any change. */
  governance: GovernanceCache;
  /** Bytes the gateway keeps (uploaded files, video outputs): a directory or a bucket (config.storage). */
  blobs: BlobStore;
  /** The intern host processes this gateway instance runs (server/interns/intern-hosts.ts). */
  internHosts: InternHosts;
  /** Answered calls' ledger rows, written behind in group commits; reads of usage wait on its barrier. */
  settlement: SettlementWriter;
  /** Who is told of inference attempts and admission decisions (the metrics, server/observability); none in some rigs. */
  observers?: { inference?: InferenceObserver; admission?: AdmissionObserver };
}
