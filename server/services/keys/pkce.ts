import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { hashKey } from "../../platform/secrets/key-secret.js";

/**
 * The secrets of the authorization-code flow (RFC 7636). A code is a bearer credential until it is
 * exchanged, so, like an API key, it is stored only as its SHA-256 and compared through that hash.
 */
export type ChallengeMethod = "S256" | "plain";

/** 10 minutes, the usual lifetime of an OAuth authorization code (RFC 6749 §4.1.2). */
export const CODE_LIFETIME_MS = 10 * 60 * 1000;

export function newAuthCode(): { code: string; codeHash: string } {
  const code = randomBytes(32).toString("base64url");
  return { code, codeHash: hashKey(code) };
}

export function authCodeHash(code: string): string {
  return hashKey(code);
}

/** Whether `verifier` answers `challenge`; constant-time so timing reveals nothing of the challenge. */
export function verifierMatches(method: ChallengeMethod, challenge: string, verifier: string): boolean {
  const derived = method === "S256" ? createHash("sha256").update(verifier, "ascii").digest("base64url") : verifier;
  const a = Buffer.from(derived, "utf8");
  const b = Buffer.from(challenge, "utf8");
  // timingSafeEqual needs equal lengths; the length of a challenge is no secret.
  return a.length === b.length && timingSafeEqual(a, b);
}
