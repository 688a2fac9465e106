import type { Sequelize } from "sequelize";
import type { AdmissionObserver } from "../engine/admission/admission-observer.js";
import type { Catalog } from "../engine/catalog/catalog.js";
import type { GatewayConfig } from "../platform/config.js";
import type { LocalSecrets } from "../platform/core/local-secrets.js";
import type { GovernanceCache } from "../engine/governance/governance-cache.js";
import type { InferenceObserver } from "../engine/inference/inference-observer.js";
import type { InternHosts } from "./interns/intern-hosts.js";
import type { Logger } from "../platform/logger.js";
import type { BlobStore } from "../platform/storage/blob-store.js";
import type { SettlementWriter } from "../engine/usage/settlement-writer.js";

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
  /** The intern host processes this gateway instance runs (server/services/interns/intern-hosts.ts). */
  internHosts: InternHosts;
  /** Answered calls' ledger rows, written behind in group commits; reads of usage wait on its barrier. */
  settlement: SettlementWriter;
  /** Who is told of inference attempts and admission decisions (the metrics, server/platform/observability); none in some rigs. */
  observers?: { inference?: InferenceObserver; admission?: AdmissionObserver };
}
