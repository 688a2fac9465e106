import { randomBytes } from "node:crypto";
import path from "node:path";
import pg from "pg";
import { startGateway, type Gateway, type GatewayOptions } from "../../server/app/app.js";
import { loadConfig } from "../../server/platform/config.js";
import { newKeySecret } from "../../server/platform/secrets/key-secret.js";
import { openDatabase } from "../../server/platform/db/database.js";
import { initModels } from "../../server/platform/db/models.js";
import { createLogger, type Logger } from "../../server/platform/logger.js";
import { makeTempDir, removeTempDir } from "./temp-dirs.js";

/** A real gateway on ephemeral ports over its own fresh database, with a known management key. */
export interface TestGateway {
  url: string;
  grpcUrl: string;
  /** The bootstrap management key of the default organization. */
  key: string;
  /** Token of OperatorService (`npm run admin`). */
  operatorToken: string;
  databaseUrl: string;
  gateway: Gateway;
  stop(): Promise<void>;
}

/**
 * The first uid of the interns' shells of this test worker's gateways. `npm test` runs files in
 * parallel worker processes (test/run.ts); a uid's processes are counted against one process limit
 * and ended together, and the shells' egress rules select by uid, so gateways of different workers
 * must not share uids. Gateways of one worker run one file at a time, as before.
 */
export const SHELL_UID_BASE = String(100_000 + Number(process.env.TEST_WORKER ?? 0) * 1_000_000);

/**
 * A gateway that is given no GATEWAY_DATA_DIR gets its own, removed by stop() (or when the process
 * exits): the default, `.data` in the working directory, would collect every test's files in the
 * repository.
 */
export async function startTestGateway(
  env: Record<string, string> = {},
  options: GatewayOptions = {},
  log: Logger = createLogger(process.env.TEST_LOG_LEVEL ?? "silent"),
): Promise<TestGateway> {
  const ownDir = env.GATEWAY_DATA_DIR === undefined ? makeTempDir("gateway") : undefined;
  const databaseUrl = await createDatabase({ migrated: true });
  const key = newKeySecret();
  const operatorToken = randomBytes(32).toString("hex");
  const config = loadConfig({
    HOST: "127.0.0.1",
    PORT: "0",
    GRPC_PORT: "0",
    DATABASE_URL: databaseUrl,
    GATEWAY_BOOTSTRAP_KEY: key,
    GATEWAY_SHUTDOWN_GRACE_MS: "2000",
    GATEWAY_OPERATOR_TOKEN: operatorToken,
    GATEWAY_MASTER_KEY: randomBytes(32).toString("hex"),
    GATEWAY_INTERN_SHELL_UID_BASE: SHELL_UID_BASE,
    // Inside the directory, so that the interns' homes beside it (`<data>-interns`) go with it.
    ...(ownDir ? { GATEWAY_DATA_DIR: path.join(ownDir, "data") } : {}),
    ...env,
  });
  const gateway = await startGateway(config, log, options);
  running.push(gateway);
  return {
    url: gateway.httpUrl,
    grpcUrl: gateway.grpcUrl,
    key,
    operatorToken,
    databaseUrl,
    gateway,
    async stop() {
      await gateway.stop();
      running.splice(running.indexOf(gateway), 1);
      // Sequelize's models belong to the process and are bound by the gateway started last: a test
      // that starts and stops a second gateway would leave its suite's gateway with models bound
      // to a closed database connection.
      const latest = running.at(-1);
      if (latest) initModels(latest.sequelize);
      if (ownDir) await removeTempDir(ownDir);
    },
  };
}

/** The test gateways of this process that are running, in the order they started. */
const running: Gateway[] = [];

/**
 * A new database on the test run's PostgreSQL (see test/run.ts): empty, or `migrated` — a copy of
 * a template this process migrated once, which saves every gateway start its migrations (about
 * 0.4 s each, a minute over the suite). The gateway still runs its migrator, which finds nothing
 * to do; suites about migrations and first starts take an empty one.
 */
export async function createDatabase(options: { migrated?: boolean } = {}): Promise<string> {
  const admin = process.env.TEST_DATABASE_URL;
  if (!admin) throw new Error("TEST_DATABASE_URL is not set: run the tests with `npm test`");
  const template = options.migrated ? await (migratedTemplate ??= createTemplate(admin)) : undefined;
  const name = `test_${randomBytes(6).toString("hex")}`;
  await asAdmin(admin, `CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ""}`);
  return databaseNamed(admin, name);
}

let migratedTemplate: Promise<string> | undefined;

async function createTemplate(admin: string): Promise<string> {
  const name = `test_template_${randomBytes(6).toString("hex")}`;
  await asAdmin(admin, `CREATE DATABASE ${name}`);
  const sequelize = await openDatabase(databaseNamed(admin, name), createLogger("silent"));
  await sequelize.close();
  return name;
}

async function asAdmin(admin: string, statement: string): Promise<void> {
  const client = new pg.Client(admin);
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

function databaseNamed(admin: string, name: string): string {
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return url.toString();
}
