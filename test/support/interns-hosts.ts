import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { InternHostAccess, InternHostStart, InternHosts } from "../../server/services/interns/intern-hosts.js";

/**
 * A test-only InternHosts for the records and vault tests: each intern's "host" is a real tiny
 * HTTP server on 127.0.0.1 that answers `GET /health` to its bearer token, so provisioning, daemon
 * access and stopping exercise real sockets. No agent runs in it (that is the runtime's own host
 * manager, tested with the chat relay). Tests steer it per intern name or id:
 * - `hold(name)`: the boot reports step 1, then waits until the returned function is called;
 * - `failBoot.add(name)`: the boot reports step 1, then fails;
 * - `silence(id)`: the running host stops answering (requests hang);
 * - `crash(id)`: the running host's server is gone (connections refused);
 * - `failStop.add(id)`: stopping the host fails.
 */
export const BOOT_STEPS = ["Starting the host", "Loading the instructions", "Checking the health endpoint"];
export const BOOT_FAILURE = "the host exited during its first boot";

interface TestHost {
  server: http.Server;
  access: InternHostAccess;
  silent: boolean;
}

export class TestInternHosts implements InternHosts {
  readonly hosts = new Map<string, TestHost>();
  /** The API key each intern's latest start was given (its plaintext exists nowhere else). */
  readonly apiKeys = new Map<string, string>();
  readonly failBoot = new Set<string>();
  readonly failStop = new Set<string>();
  readonly starts: string[] = [];
  readonly stops: string[] = [];
  private readonly holds = new Map<string, Promise<void>>();

  hold(name: string): () => void {
    let release!: () => void;
    this.holds.set(name, new Promise<void>((resolve) => (release = resolve)));
    return () => {
      this.holds.delete(name);
      release();
    };
  }

  /** The host's server goes away while the host still counts as running: reaching it fails. */
  async crash(internId: string): Promise<void> {
    const host = this.hosts.get(internId);
    if (!host) return;
    host.server.closeAllConnections();
    await new Promise<void>((resolve) => host.server.close(() => resolve()));
  }

  silence(internId: string): void {
    const host = this.hosts.get(internId);
    if (host) host.silent = true;
  }

  async start({ intern, apiKey, onStep }: InternHostStart, signal: AbortSignal): Promise<InternHostAccess> {
    this.starts.push(intern.id);
    this.apiKeys.set(intern.id, apiKey);
    const step = (index: number) => onStep({ label: BOOT_STEPS[index]!, number: index + 1, total: BOOT_STEPS.length });
    step(0);
    const held = this.holds.get(intern.name);
    if (held) await Promise.race([held, aborted(signal)]);
    if (this.failBoot.has(intern.name)) throw new Error(BOOT_FAILURE);
    const existing = this.hosts.get(intern.id);
    if (existing) return existing.access;
    step(1);
    const host = await listen(intern.id);
    this.hosts.set(intern.id, host);
    step(2);
    const health = await fetch(`${host.access.origin}/health`, {
      headers: { authorization: `Bearer ${host.access.token}` },
      signal,
    });
    if (health.status !== 200) throw new Error(`health check answered ${health.status}`);
    return host.access;
  }

  async stop(internId: string): Promise<void> {
    this.stops.push(internId);
    if (this.failStop.has(internId)) throw new Error("the host did not stop");
    const host = this.hosts.get(internId);
    if (!host) return;
    this.hosts.delete(internId);
    host.server.closeAllConnections();
    await new Promise<void>((resolve) => host.server.close(() => resolve()));
  }

  async destroy(internId: string): Promise<void> {
    await this.stop(internId);
  }

  async recorded(internId: string): Promise<InternHostAccess | undefined> {
    return this.hosts.get(internId)?.access;
  }

  async access(internId: string, signal: AbortSignal): Promise<InternHostAccess | undefined> {
    const host = this.hosts.get(internId);
    if (!host) return undefined;
    const health = await fetch(`${host.access.origin}/health`, {
      headers: { authorization: `Bearer ${host.access.token}` },
      signal,
    });
    return health.status === 200 ? host.access : undefined;
  }

  async close(): Promise<void> {
    this.failStop.clear();
    await Promise.all([...this.hosts.keys()].map((id) => this.stop(id)));
  }
}

function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(new Error("boot cancelled"));
    signal.addEventListener("abort", () => reject(new Error("boot cancelled")), { once: true });
  });
}

async function listen(internId: string): Promise<TestHost> {
  const token = randomBytes(24).toString("hex");
  const host: TestHost = { server: http.createServer(), access: { origin: "", token }, silent: false };
  host.server.on("request", (req, res) => {
    // A silent host keeps the connection open and never answers.
    if (host.silent) return;
    if (req.headers.authorization !== `Bearer ${token}`) {
      res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: "unauthorized" }));
      return;
    }
    if (req.method === "GET" && req.url === "/health") {
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ intern_id: internId, open_runs: 0 }));
      return;
    }
    res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: "not found" }));
  });
  await new Promise<void>((resolve) => host.server.listen(0, "127.0.0.1", resolve));
  const { port } = host.server.address() as AddressInfo;
  host.access.origin = `http://127.0.0.1:${port}`;
  return host;
}
