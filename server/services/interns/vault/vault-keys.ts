import { createHmac, randomBytes } from "node:crypto";
import { open, seal } from "../../../platform/secrets/secret-box.js";

/**
 * Envelope encryption of the vault: every vault has its own 32-byte data key, stored only sealed
 * (AES-256-GCM) by the gateway's master key; values are sealed by their vault's data key with the
 * vault and the secret name as associated data, so a value moved onto another row or vault does
 * not open. A tampered value or key fails to open: nothing is released (fail closed).
 */
export interface VaultKey {
  vaultId: string;
  dataKey: Buffer;
}

const keyContext = (vaultId: string) => `vault-key:${vaultId}`;
const valueContext = (vaultId: string, name: string) => `vault-secret:${vaultId}:${name}`;

export function newSealedDataKey(masterKey: Buffer, vaultId: string): Buffer {
  return seal(masterKey, randomBytes(32).toString("base64"), keyContext(vaultId));
}

export function openDataKey(masterKey: Buffer, vaultId: string, sealed: Buffer): VaultKey {
  return { vaultId, dataKey: Buffer.from(open(masterKey, sealed, keyContext(vaultId)), "base64") };
}

export function sealValue(key: VaultKey, name: string, value: string): Buffer {
  return seal(key.dataKey, value, valueContext(key.vaultId, name));
}

/** Throws when the stored value was altered. */
export function openValue(key: VaultKey, name: string, sealed: Buffer): string {
  return open(key.dataKey, sealed, valueContext(key.vaultId, name));
}

/**
 * `sha256:` + HMAC-SHA-256 of the value under the vault's own data key. Equal values
 * give equal fingerprints within a vault and different ones across vaults; nothing about the value
 * can be learnt from it without the key.
 */
export function fingerprintOf(key: VaultKey, value: string): string {
  return `sha256:${createHmac("sha256", key.dataKey).update(value, "utf8").digest("hex")}`;
}
