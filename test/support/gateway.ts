import { randomBytes } from "node:crypto";
import pg from "pg";
import { startGateway, type Gateway, type GatewayOptions } from "../../server/gateway/app.js";
import { loadConfig } from "../../server/config.js";
import { newKeySecret } from "../../server/core/key-secret.js";
import { createLogger, type Logger } from "../../server/logger.js";

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

export async function startTestGateway(env: Record<string, string> = {}, options: GatewayOptions = {}, log: Logger = createLogger(process.env.TEST_LOG_LEVEL ?? "silent")): Promise<TestGateway> {
  const databaseUrl = await createDatabase();
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
    ...env,
  });
  const gateway = await startGateway(config, log, options);
  return { url: gateway.httpUrl, grpcUrl: gateway.grpcUrl, key, operatorToken, databaseUrl, gateway, stop: () => gateway.stop() };
}

/** A new, empty database on the test run's PostgreSQL (see test/run.ts). */
export async function createDatabase(): Promise<string> {
  const admin = process.env.TEST_DATABASE_URL;
  if (!admin) throw new Error("TEST_DATABASE_URL is not set: run the tests with `npm test`");
  const name = `test_${randomBytes(6).toString("hex")}`;
  const client = new pg.Client(admin);
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return url.toString();
}
