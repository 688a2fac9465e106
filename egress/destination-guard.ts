import { promises as dns, type LookupAddress } from "node:dns";
import net from "node:net";

/**
 * SSRF guard of every request the gateway sends to a caller-chosen URL (private endpoints, the
 * interns' fetch tool): a caller cannot point it at loopback, the private network, or a cloud
 * metadata service. The hostname is resolved here and every address must be public; the caller then
 * connects to exactly these addresses (see pinned-lookup.ts), so DNS cannot be rebound between
 * check and connect. Operators open holes with an allow-list of hostnames
 * (GATEWAY_PRIVATE_ENDPOINT_ALLOWED_HOSTS, GATEWAY_INTERN_FETCH_ALLOWED_HOSTS).
 */
export interface VettedDestination {
  /** Hostname (or IP literal, without brackets) as the URL names it; TLS is verified against it. */
  host: string;
  addresses: LookupAddress[];
}

/**
 * A destination the gateway must not call. The message names the hostname, never the whole URL;
 * `host` and `reason` let a caller word its own message.
 */
export class DestinationRefused extends Error {
  constructor(
    message: string,
    readonly host: string,
    readonly reason: "not_public" | "unresolved",
  ) {
    super(message);
  }
}

export interface DestinationGuard {
  vet(url: URL): Promise<VettedDestination>;
}

/** IPv4 ranges that are not public unicast (IANA special-purpose registry). */
export const NON_PUBLIC_V4: Array<[string, number]> = [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local, incl. the 169.254.169.254 metadata service
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation
  ["192.88.99.0", 24], // 6to4 relay anycast
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, incl. broadcast 255.255.255.255
];

export const NON_PUBLIC_V6: Array<[string, number]> = [
  ["::", 96], // unspecified ::, loopback ::1 and the deprecated IPv4-compatible form
  ["64:ff9b:1::", 48], // local-use NAT64
  ["100::", 64], // discard-only
  ["2001::", 32], // Teredo
  ["2001:10::", 28], // ORCHID
  ["2001:20::", 28], // ORCHIDv2
  ["2001:db8::", 32], // documentation
  ["3fff::", 20], // documentation
  ["fc00::", 7], // unique local, incl. fd00:ec2::254, the metadata service over IPv6
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated)
  ["ff00::", 8], // multicast
];

/**
 * Public addresses that are nonetheless a cloud provider's own services: Azure's wireserver, which
 * serves its metadata.
 */
export const HOST_SERVICES_V4: Array<[string, number]> = [["168.63.129.16", 32]];

const nonPublicV4 = new net.BlockList();
for (const [network, prefix] of [...NON_PUBLIC_V4, ...HOST_SERVICES_V4]) nonPublicV4.addSubnet(network, prefix, "ipv4");
const nonPublicV6 = new net.BlockList();
for (const [network, prefix] of NON_PUBLIC_V6) nonPublicV6.addSubnet(network, prefix, "ipv6");

/**
 * Whether an address is public unicast and no cloud provider's own service, looking through IPv6 forms
 * that carry an IPv4 address.
 */
export function isPublicAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return !nonPublicV4.check(address, "ipv4");
  if (family !== 6) return false;
  const embedded = embeddedIPv4(address);
  if (embedded !== undefined && nonPublicV4.check(embedded, "ipv4")) return false;
  return !nonPublicV6.check(address, "ipv6");
}

/**
 * IPv6 prefixes whose next 32 bits are an IPv4 address that a packet sent there reaches:
 * IPv4-mapped, IPv4-translated, NAT64 and 6to4. `isPublicAddress` looks through them; the interns'
 * shells reject the same forms of every range it refuses (server/services/interns/shell-egress-rules.ts).
 */
export const IPV4_CARRYING_V6: ReadonlyArray<[string, number]> = [
  ["::ffff:0:0", 96], // IPv4-mapped
  ["::ffff:0:0:0", 96], // IPv4-translated
  ["64:ff9b::", 96], // NAT64
  ["2002::", 16], // 6to4
];

const carriers = IPV4_CARRYING_V6.map(([network, prefix]) => ({
  bits: bitsOf(network),
  shift: BigInt(128 - prefix),
  prefix,
}));

/** The IPv4 address inside an address of one of the IPV4_CARRYING_V6 prefixes. */
function embeddedIPv4(address: string): string | undefined {
  const bits = bitsOf(address);
  const carrier = carriers.find(({ bits: network, shift }) => bits >> shift === network >> shift);
  if (carrier === undefined) return undefined;
  const v4 = Number((bits >> (carrier.shift - 32n)) & 0xffff_ffffn);
  return [v4 >>> 24, (v4 >>> 16) & 0xff, (v4 >>> 8) & 0xff, v4 & 0xff].join(".");
}

/** The IPv6 ranges through which a packet reaches an IPv4 range: one per IPV4_CARRYING_V6 prefix. */
export function ipv4CarryingForms([network, prefix]: [string, number]): Array<[string, number]> {
  const v4 = BigInt(network.split(".").reduce((sum, octet) => sum * 256 + Number(octet), 0));
  return carriers.map(({ bits, shift, prefix: carrierPrefix }) => {
    const combined = bits | (v4 << (shift - 32n));
    const groups = Array.from({ length: 8 }, (_, i) => ((combined >> BigInt(112 - 16 * i)) & 0xffffn).toString(16));
    return [groups.join(":"), carrierPrefix + prefix];
  });
}

/** A valid IPv6 literal (checked by net.isIP before) as one 128-bit number. */
function bitsOf(address: string): bigint {
  return hextets(address).reduce((sum, group) => (sum << 16n) | BigInt(group), 0n);
}

/** The eight 16-bit groups of a valid IPv6 literal (checked by net.isIP before). */
function hextets(address: string): number[] {
  let text = address.replace(/%.*$/, "");
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const groups = (part: string) => (part === "" ? [] : part.split(":").map((g) => parseInt(g, 16)));
  const front = groups(head);
  const back = tail === undefined ? [] : groups(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

export interface DestinationGuardOptions {
  allowedHosts: readonly string[];
  resolveTimeoutMs: number;
  /**
   * Addresses fixed for hostnames (lower-case, like curl --resolve): used instead of DNS and vetted
   * like resolved ones.
   */
  fixedAddresses?: Readonly<Record<string, string>>;
}

export function createDestinationGuard(options: DestinationGuardOptions): DestinationGuard {
  // Allow-list entries are exact hostnames or IP literals; literals are matched as addresses so
  // that "::1" and "0::1" are the same entry, and also allow a name that resolves to them.
  const allowedNames = new Set<string>();
  const allowedAddresses = new net.BlockList();
  for (const entry of options.allowedHosts) {
    const bare = unbracket(entry.toLowerCase());
    const family = net.isIP(bare);
    if (family === 0) allowedNames.add(withoutTrailingDot(bare));
    else allowedAddresses.addAddress(bare, family === 4 ? "ipv4" : "ipv6");
  }
  const addressAllowed = (address: string) => {
    const family = net.isIP(address);
    return family !== 0 && allowedAddresses.check(address, family === 4 ? "ipv4" : "ipv6");
  };

  return {
    async vet(url) {
      const host = unbracket(url.hostname.toLowerCase());
      const hostAllowed = allowedNames.has(withoutTrailingDot(host));
      const addresses = await addressesOf(host, options);
      for (const { address } of addresses) {
        if (hostAllowed || addressAllowed(address) || isPublicAddress(address)) continue;
        // The resolved address is not named: it would tell a caller how internal names resolve.
        throw new DestinationRefused(
          net.isIP(host)
            ? `base_url host '${host}' is not a public address; ` +
                "private endpoints must be reachable on the public internet"
            : `base_url host '${host}' resolves to a non-public address; ` +
                "private endpoints must be reachable on the public internet",
          host,
          "not_public",
        );
      }
      return { host, addresses };
    },
  };
}

async function addressesOf(host: string, options: DestinationGuardOptions): Promise<LookupAddress[]> {
  const address = net.isIP(host) ? host : options.fixedAddresses?.[withoutTrailingDot(host)];
  if (address === undefined) return resolve(host, options.resolveTimeoutMs);
  if (net.isIP(address) === 0)
    throw new DestinationRefused(`host '${host}' has a fixed address that is not an IP address`, host, "unresolved");
  return [{ address, family: net.isIP(address) }];
}

async function resolve(host: string, timeoutMs: number): Promise<LookupAddress[]> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new DestinationRefused(`base_url host '${host}' could not be resolved in time`, host, "unresolved")),
      timeoutMs,
    );
  });
  try {
    const addresses = await Promise.race([dns.lookup(host, { all: true, verbatim: true }), deadline]);
    if (addresses.length === 0)
      throw new DestinationRefused(`base_url host '${host}' could not be resolved`, host, "unresolved");
    return addresses;
  } catch (err) {
    if (err instanceof DestinationRefused) throw err;
    throw new DestinationRefused(`base_url host '${host}' could not be resolved`, host, "unresolved");
  } finally {
    clearTimeout(timer);
  }
}

function unbracket(host: string): string {
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}

/** "example.com." and "example.com" are the same DNS name. */
function withoutTrailingDot(host: string): string {
  return host.endsWith(".") ? host.slice(0, -1) : host;
}
