/**
 * The hostnames a secret is bound to (docs/api/vault.md): exact DNS names, compared exactly. Stored
 * lowercased without a trailing dot, duplicates collapsed; schemes, ports, paths, wildcards and
 * empty values are refused (the proto's field rule refuses them before a handler runs; this check
 * keeps in-process callers to the same rule).
 *
 * @module
 */
import { gatewayError } from "../../../../wire/errors.js";

const LABEL = "[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?";
const HOSTNAME = new RegExp(`^${LABEL}(?:\\.${LABEL})*$`);
const MAX_HOST_LENGTH = 254;

function normalizeHost(raw: string): string | undefined {
  if (raw.length === 0 || raw.length > MAX_HOST_LENGTH) return undefined;
  const host = raw.toLowerCase().replace(/\.$/, "");
  return HOSTNAME.test(host) ? host : undefined;
}

export function normalizeHosts(hosts: readonly string[]): string[] {
  const normalized = new Set<string>();
  hosts.forEach((raw, index) => {
    const host = normalizeHost(raw);
    if (host === undefined)
      throw gatewayError(
        400,
        `hosts[${index}] must be an exact DNS hostname such as api.github.com, without scheme, port, path or wildcard`,
      );
    normalized.add(host);
  });
  return [...normalized];
}

/**
 * The hostname a request to `url` goes to, in the stored form, and whether it goes over https;
 * undefined for anything that is not an http(s) URL. The WHATWG parser has already lowercased the
 * name, decoded percent-escapes and turned an internationalized name into its ASCII form, i.e. the
 * name that is actually resolved.
 */
export function requestTargetOf(url: string | URL): { host: string; https: boolean } | undefined {
  let parsed: URL;
  try {
    parsed = typeof url === "string" ? new URL(url) : url;
  } catch {
    return undefined;
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return undefined;
  const host = parsed.hostname.replace(/\.$/, "");
  return host ? { host, https: parsed.protocol === "https:" } : undefined;
}
