import { randomBytes } from "node:crypto";

/**
 * Ids of video jobs in OpenRouter's generation-id form: `gen-vid-<unix seconds>-<20
 * alphanumerics>` for the job, `gen-<unix seconds>-<20 alphanumerics>` for its generation (the
 * usage ledger row that bills it), like the ids of chat generations.
 */
export const JOB_ID = /^gen-vid-[0-9]+-[A-Za-z0-9]{20}$/;

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

export function newJobId(now = Date.now()): string {
  return `gen-vid-${Math.floor(now / 1000)}-${alphanumerics(20)}`;
}

export function newGenerationId(now = Date.now()): string {
  return `gen-${Math.floor(now / 1000)}-${alphanumerics(20)}`;
}

function alphanumerics(length: number): string {
  // 256 is not a multiple of 62: bytes past the last whole multiple are drawn again, so every
  // character is equally likely.
  const limit = 256 - (256 % ALPHABET.length);
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length))
      if (byte < limit && out.length < length) out += ALPHABET[byte % ALPHABET.length];
  }
  return out;
}
