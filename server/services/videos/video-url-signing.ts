import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";

/**
 * Signed download URLs of video outputs: `/api/v1/videos/<job>/content?index=<n>&expires=<unix
 * seconds>&sig=<signature>`, usable without an API key until `expires` (the job's `expires_at`).
 * The signature is HMAC-SHA256 over the job id, the output index and `expires`, base64url without
 * padding, keyed with a key derived (HKDF-SHA256) from the gateway's master key: instances that
 * share a database share the master key, so any of them verifies what another signed, and
 * changing the master key revokes every URL. Signed URLs are credentials: they are computed when a
 * job is shown and never stored or logged.
 */
export interface UrlSigner {
  /** The signed content URL of output `index`, valid until `expires` (Unix seconds). */
  url(jobId: string, index: number, expires: number): string;
  /** Whether `sig` is the signature of these values (in constant time); expiry is the caller's check. */
  verify(jobId: string, index: number, expires: bigint, sig: string): boolean;
}

const INFO = "model-gateway video download URLs v1";

export function createUrlSigner(masterKey: Buffer): UrlSigner {
  const key = Buffer.from(hkdfSync("sha256", masterKey, Buffer.alloc(0), INFO, 32));
  const sign = (jobId: string, index: number, expires: bigint | number) =>
    createHmac("sha256", key).update(`${jobId}\n${index}\n${expires}`).digest();
  return {
    url(jobId, index, expires) {
      return (
        `${contentPath(jobId)}?index=${index}&expires=${expires}` +
        `&sig=${sign(jobId, index, expires).toString("base64url")}`
      );
    },
    verify(jobId, index, expires, sig) {
      const given = Buffer.from(sig, "base64url");
      // The decoder skips stray characters and ignores the last character's spare bits: only the
      // canonical text is the signature.
      if (given.toString("base64url") !== sig) return false;
      const expected = sign(jobId, index, expires);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}

export function contentPath(jobId: string): string {
  return `/api/v1/videos/${encodeURIComponent(jobId)}/content`;
}
