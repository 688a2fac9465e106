import { randomBytes } from "node:crypto";
import os from "node:os";

/**
 * The name a process's work loops (batch engine, video poller) write into the leases they take:
 * host and pid for the operator reading the table, a random suffix so a restarted process with a
 * reused pid never mistakes its predecessor's leases for its own.
 */
export function newLeaseOwner(): string {
  return `${os.hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
}
