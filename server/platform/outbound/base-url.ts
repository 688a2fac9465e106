import { gatewayError } from "../../../wire/errors.js";

/**
 * What a base_url may look like beyond the proto's `https://` pattern (400 otherwise). Whether
 * its host may be called is the destination guard's question (422).
 */
export function parseBaseUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw gatewayError(400, "base_url must be a valid https:// URL");
  }
  if (url.protocol !== "https:") throw gatewayError(400, "base_url must be an https:// URL");
  // Credentials in a URL end up in logs and error messages; the BYOK credential authenticates.
  if (url.username !== "" || url.password !== "") throw gatewayError(400, "base_url must not contain user credentials");
  // Request paths are appended to the base URL, which a query or fragment would break.
  if (/[?#]/.test(raw)) throw gatewayError(400, "base_url must not have a query or fragment");
  return url;
}

/** `{base_url}{path}`: "https://h/v1/" + "/chat/completions" → "https://h/v1/chat/completions". */
export function upstreamUrl(baseUrl: string, path: string): URL {
  return new URL(baseUrl.replace(/\/+$/, "") + path);
}
