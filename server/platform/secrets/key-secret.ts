import { createHash, randomBytes } from "node:crypto";

/** API key secrets: generated here, stored only as their SHA-256, shown masked as `label`. */
export const KEY_PREFIX = "sk-gw-v1-";

export function newKeySecret(): string {
  return KEY_PREFIX + randomBytes(32).toString("hex");
}

export function hashKey(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

/** "sk-gw-v1-3f2...9ab": enough to recognise a key, useless to an attacker. */
export function maskKey(secret: string): string {
  const visible = secret.startsWith(KEY_PREFIX) ? KEY_PREFIX.length + 3 : 3;
  return `${secret.slice(0, visible)}...${secret.slice(-3)}`;
}
