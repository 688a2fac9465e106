import type { Sequelize } from "sequelize";
import type { Engine } from "../engine/index.js";
import type { GatewayConfig } from "../platform/config.js";
import type { NotificationFeed } from "../platform/db/notification-feed.js";
import type { Logger } from "../platform/logger.js";
import type { LocalSecrets } from "../platform/secrets/local-secrets.js";
import type { BlobStore } from "../platform/storage/blob-store.js";
import type { InternHosts } from "./interns/intern-hosts.js";

/**
 * What service implementations are built from, each by name: the platform's parts, the engine's
 * face, and what only services use. The engine's own parts (catalog, governance cache, key pools,
 * settlement, …) are read through `engine`.
 */
export interface Deps {
  config: GatewayConfig;
  log: Logger;
  /** The services' own stores; the engine keeps its database to itself. */
  sequelize: Sequelize;
  secrets: LocalSecrets;
  /** Word from the other instances (PostgreSQL LISTEN). */
  notifications: NotificationFeed;
  /** The engine's face: callers' governance, routes, endpoint attempts, live calls (server/engine/README.md). */
  engine: Engine;
  /** Bytes the gateway keeps (uploaded files, video outputs): a directory or a bucket (config.storage). */
  blobs: BlobStore;
  /** The intern host processes this gateway instance runs (server/services/interns/intern-hosts.ts). */
  internHosts: InternHosts;
}
