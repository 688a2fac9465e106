/**
 * How a caller presents an API key (`Authorization: Bearer <key>`, docs/api/conventions.md), read the same way by
 * the core's auth interceptor and by the REST facade, which refuses a request without one before
 * it reads the body.
 *
 * @module
 */

export const MISSING_KEY_MESSAGE = "Missing or malformed Authorization header; expected 'Bearer <API key>'";

/** The token of a well-formed header, else undefined. */
export function bearerTokenOf(header: string | null | undefined): string | undefined {
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1] || undefined;
}
