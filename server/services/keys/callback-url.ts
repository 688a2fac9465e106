import { gatewayError } from "../../../wire/errors.js";

/**
 * The callback URL of an authorization code: https anywhere, or http(s) on the loopback
 * names local tools listen on. Credentials in a URL would end up in logs and browser history, so a
 * URL with userinfo is refused.
 */
export interface CallbackTarget {
  /** scheme://host[:port]; one app per organization and origin. */
  origin: string;
  /** host[:port], the app's name and the key label's default. */
  host: string;
}

const LOOPBACK = new Set(["localhost", "127.0.0.1"]);

export function callbackTarget(raw: string): CallbackTarget {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw gatewayError(400, "callback_url must be an absolute URL");
  }
  if (url.username !== "" || url.password !== "")
    throw gatewayError(400, "callback_url must not contain a user name or password");
  const allowed = url.protocol === "https:" || (url.protocol === "http:" && LOOPBACK.has(url.hostname));
  if (!allowed || url.hostname === "") {
    throw gatewayError(400, "callback_url must be an https URL, or an http URL on localhost or 127.0.0.1");
  }
  return { origin: url.origin, host: url.host };
}
