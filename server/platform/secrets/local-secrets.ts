import { randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type { GatewayConfig } from "../config.js";

/**
 * The gateway's own secrets: the operator token (OperatorService, `npm run admin`) and the master
 * key that seals stored credentials. Each comes from the environment or, when unset, from a file in
 * the data directory created on first start (mode 0600), so a fresh install needs no setup and the
 * admin command on the same machine finds the token. Instances that share a database through
 * DATABASE_URL must be given the same GATEWAY_MASTER_KEY.
 */
export interface LocalSecrets {
  operatorToken: string;
  masterKey: Buffer;
}

export const OPERATOR_TOKEN_FILE = "operator.token";
const MASTER_KEY_FILE = "master.key";

export async function loadLocalSecrets(config: GatewayConfig): Promise<LocalSecrets> {
  const operatorToken = config.operatorToken ?? (await fileSecret(config.dataDir, OPERATOR_TOKEN_FILE));
  const masterHex = config.masterKey ?? (await fileSecret(config.dataDir, MASTER_KEY_FILE));
  if (!/^[0-9a-fA-F]{64}$/.test(masterHex))
    throw new Error("GATEWAY_MASTER_KEY must be 64 hexadecimal characters (32 bytes)");
  return { operatorToken, masterKey: Buffer.from(masterHex, "hex") };
}

/** Reads `dir/name`, creating it with 32 random bytes (hex) when it does not exist yet. */
async function fileSecret(dir: string, name: string): Promise<string> {
  const file = path.join(dir, name);
  await mkdir(dir, { recursive: true });
  try {
    // `wx`: of two instances starting together, one writes and the other reads.
    await writeFile(file, `${randomBytes(32).toString("hex")}\n`, { flag: "wx", mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  return (await readFile(file, "utf8")).trim();
}
