/**
 * The seam between intern records (intern-records service: create, provision, suspend, delete,
 * daemon access) and intern runtimes (the host processes that run each intern's agent, and the
 * chat relay). Records decide *whether* an intern runs; hosts make it run.
 *
 * @module
 */
import type { InternRecord } from "./intern-record.js";

/** How the gateway, and `GET /interns/{id}/daemon` callers, reach a running host. A credential: never logged. */
export interface InternHostAccess {
  /** e.g. `http://127.0.0.1:43121`. */
  origin: string;
  token: string;
}

/** One provisioning step, reported into the record's `progress`. */
export interface ProvisionStep {
  label: string;
  number: number;
  total: number;
}

export interface InternHostStart {
  intern: InternRecord;
  /** The intern's own gateway API key (plaintext, created at provisioning): the host's model calls use it. */
  apiKey: string;
  onStep(step: ProvisionStep): void;
  /** Called when the started host exits without being asked to (a crash): the intern's runtime is gone. */
  onExit(): void;
}

export interface InternHosts {
  /** Starts a new host for the intern (stopping any earlier one); resolves once it answers its health check. */
  start(request: InternHostStart, signal: AbortSignal): Promise<InternHostAccess>;
  /** Stops the host and ends its runs; no error when none runs. */
  stop(internId: string): Promise<void>;
  /** Stops the host and removes the intern's files (working directory, sessions) from this instance's disk. */
  destroy(internId: string): Promise<void>;
  /** Where the intern's host is registered, without asking it (the caller's own call tells unreachable from slow). */
  recorded(internId: string): Promise<InternHostAccess | undefined>;
  /**
   * The access of the intern's running host, or undefined when it does not run or refuses; a host
   * that does not answer in time is a HostCallError of kind `timeout`.
   */
  access(internId: string, signal: AbortSignal): Promise<InternHostAccess | undefined>;
  /** Stops every host this gateway process started (shutdown). */
  close(): Promise<void>;
}
