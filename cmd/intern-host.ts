/**
 * An intern host: one intern's agent runtime in its own process, started by the gateway
 * (server/services/interns/host-manager.ts) with an IPC channel. It takes its configuration over that
 * channel, listens on a random port (of 127.0.0.1 unless configured), says `ready`, and exits when told to or when
 * the gateway that started it goes away.
 *
 * @module
 */
import { mkdir } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { endShellGroups } from "../intern-host/agent/shell-tool.js";
import type { HostConfig, HostMessage, ParentMessage, ReleasedSecret } from "../wire/host-protocol.js";
import { HostRuns } from "../intern-host/host-runs.js";
import { createHostServer } from "../intern-host/host-server.js";
import { SessionStore } from "../intern-host/session-store.js";

const send = process.send?.bind(process) as ((message: HostMessage) => boolean) | undefined;
if (!send) {
  console.error("an intern host is started by the gateway, with an IPC channel");
  process.exit(2);
}

const config = await new Promise<HostConfig>((resolve) => {
  // A parent gone before it sent the configuration will never send it.
  const orphaned = () => process.exit(1);
  const first = (message: ParentMessage) => {
    if (message.type !== "config") return;
    process.off("message", first);
    process.off("disconnect", orphaned);
    resolve(message.config);
  };
  process.on("message", first);
  process.once("disconnect", orphaned);
});
await mkdir(config.workDir, { recursive: true });
await mkdir(config.stateDir, { recursive: true });

const releases = new Map<number, { resolve(secrets: ReleasedSecret[]): void; reject(err: Error): void }>();
let nextRelease = 1;

/** Asks the gateway which secrets the vault releases to exactly this URL's host. */
function release(url: string): Promise<ReleasedSecret[]> {
  const id = nextRelease++;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      releases.delete(id);
      reject(new Error("the gateway did not release the secrets in time"));
    }, config.limits.fetchTimeoutMs);
    releases.set(id, {
      resolve: (secrets) => {
        clearTimeout(timer);
        resolve(secrets);
      },
      reject: (err) => {
        clearTimeout(timer);
        reject(err);
      },
    });
    send!({ type: "secrets", id, url });
  });
}

const runs = new HostRuns({ config, sessions: new SessionStore(path.join(config.stateDir, "sessions")), release });
let stopping = false;

function stop(): void {
  if (stopping) return;
  stopping = true;
  runs.cancelAll("the intern was stopped");
  // Also what its commands left running in the background: nothing outlives the host.
  endShellGroups();
  // The runs' last events are written; let them leave before the connections close.
  setImmediate(() => {
    server.close(() => process.exit(0));
    server.closeIdleConnections();
  });
  setTimeout(() => process.exit(0), 3_000).unref();
}

process.on("message", (message: ParentMessage) => {
  if (message.type === "shutdown") stop();
  if (message.type !== "secrets") return;
  const waiting = releases.get(message.id);
  releases.delete(message.id);
  if (!waiting) return;
  if ("error" in message) waiting.reject(new Error(message.error));
  else waiting.resolve(message.secrets);
});
// The gateway that started this host is gone: nobody can reach its runs any more.
process.on("disconnect", stop);
process.on("SIGTERM", stop);

const server = createHostServer(config, runs, stop);
server.listen(0, config.listenAddress, () => {
  send({ type: "ready", port: (server.address() as AddressInfo).port });
});
