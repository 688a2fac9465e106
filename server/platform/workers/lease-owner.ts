import { randomBytes } from "node:crypto";
import os from "node:os";
import { processRuns } from "./process-runs.js";

/** Owners named by this process: several gateway instances may share one (tests, embedders), and they all live. */
const mintedHere = new Set<string>();

/**
 * The name a process's work loops (batch runner, video poller) write into the leases they take:
 * host and pid for the operator reading the table, a random suffix so a restarted process with a
 * reused pid never mistakes its predecessor's leases for its own.
 */
export function newLeaseOwner(): string {
  const owner = `${os.hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
  mintedHere.add(owner);
  return owner;
}

/**
 * Whether `owner` names a process of this machine that no longer runs (or an earlier process with
 * our own pid: a restarted container; never an instance of this very process): its leases need
 * not wait to lapse. Owners of other machines cannot be checked and are never called dead here.
 */
export function isGoneLocalOwner(owner: string, self: string): boolean {
  const [pid, suffix] = owner.split(":").slice(-2);
  const host = owner.split(":").slice(0, -2).join(":");
  if (owner === self || host !== os.hostname() || !pid || !suffix || !/^\d+$/.test(pid)) return false;
  if (Number(pid) === process.pid) return !mintedHere.has(owner);
  return !processRuns(Number(pid));
}
