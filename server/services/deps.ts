import type { Engine } from "../engine/engine.js";
import type { EngineDeps } from "../engine/engine-deps.js";
import type { BlobStore } from "../platform/storage/blob-store.js";
import type { InternHosts } from "./interns/intern-hosts.js";

/** What service implementations are built from: the engine's parts and what only services use. */
export interface Deps extends EngineDeps {
  /** The engine's face: callers' governance, routes, endpoint attempts, live calls (server/engine/engine.ts). */
  engine: Engine;
  /** Bytes the gateway keeps (uploaded files, video outputs): a directory or a bucket (config.storage). */
  blobs: BlobStore;
  /** The intern host processes this gateway instance runs (server/services/interns/intern-hosts.ts). */
  internHosts: InternHosts;
}
