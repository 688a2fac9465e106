import net from "node:net";
import {
  HOST_SERVICES_V4,
  ipv4CarryingForms,
  NON_PUBLIC_V4,
  NON_PUBLIC_V6,
} from "../../../egress/destination-guard.js";

/**
 * The nftables table that holds interns' shells to what the `fetch` tool may reach
 * (shell-egress.ts installs it). For the shells' uids only, in this order, the first match wins:
 *
 * 1. the cloud metadata services are rejected, whatever is opened below: link-local 169.254/16
 *    (GCE's and AWS's 169.254.169.254, which on GCE is also the name server), Azure's wireserver
 *    168.63.129.16, AWS's fd00:ec2::254, and the IPv6 forms that carry those IPv4 addresses;
 * 2. the gateway's own ports and its intern hosts' ports (the set `closed_ports`, filled as they
 *    listen) are rejected on every address, since this machine's public address, behind NAT say,
 *    cannot be known from inside;
 * 3. the database's port is rejected on the database's addresses, which may be routable;
 * 4. the system's name servers are accepted on port 53 (UDP and TCP) only: a resolver on loopback
 *    (systemd-resolved's 127.0.0.53) or a private address must not open that host's other services;
 * 5. the fetch tool's allowed hosts (their addresses, resolved at start) are accepted;
 * 6. what `fetch` refuses is rejected: loopback, private, link-local and the other non-public
 *    ranges (destination-guard.ts), and their IPv4-carrying forms, which the guard looks through
 *    the same way; and NAT64 (64:ff9b::/96) and 6to4 (2002::/16) whole, even to public IPv4 hosts:
 *    a translator or relay on the path is a host of its own whose reach the gateway cannot see, so
 *    only an allowed host that resolves there (step 5) opens one of their addresses.
 *
 * The documentation ranges (TEST-NET-1/2/3, 2001:db8::/32, 3fff::/20) are the one difference from
 * `fetch`'s guard: nothing real lives there, so blocking them protects nothing, and a test can
 * prove that the shell still reaches the outside through an address of its own there.
 */
export interface EgressPlan {
  /** The interns' shell uids: `[first, last]`. */
  uids: [number, number];
  /** Ports in `closed_ports` from the start. */
  ports: readonly number[];
  /** The database's addresses and its port. */
  database: { addresses: readonly string[]; port: number } | undefined;
  nameServers: readonly string[];
  /** The allowed hosts' addresses. */
  allowed: readonly string[];
}

/** The set of ports closed on every address, which the gateway fills as its listeners and hosts start. */
export const CLOSED_PORTS = "closed_ports";

type Range = [string, number];

const METADATA_V4: Range[] = [["169.254.0.0", 16], ...HOST_SERVICES_V4];
const METADATA_V6: Range[] = [["fd00:ec2::254", 128], ...METADATA_V4.flatMap(ipv4CarryingForms)];

/** Ranges that a real network never routes: left open (see above). */
const DOCUMENTATION = new Set(["192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32", "3fff::/20"]);
const isDocumentation = ([network, prefix]: Range) => DOCUMENTATION.has(`${network}/${prefix}`);
const NON_PUBLIC_V4_DENIED = [...NON_PUBLIC_V4, ...HOST_SERVICES_V4].filter((range) => !isDocumentation(range));
/** NAT64 and 6to4, refused whole (step 6). */
const TRANSLATED_V6: Range[] = [
  ["64:ff9b::", 96],
  ["2002::", 16],
];
const NON_PUBLIC_V6_DENIED = [
  ...NON_PUBLIC_V6.filter((range) => !isDocumentation(range)),
  ...NON_PUBLIC_V4_DENIED.flatMap(ipv4CarryingForms),
  ...TRANSLATED_V6,
];

const metadata = new net.BlockList();
for (const [network, prefix] of METADATA_V4) metadata.addSubnet(network, prefix, "ipv4");
for (const [network, prefix] of METADATA_V6) metadata.addSubnet(network, prefix, "ipv6");

/** Whether an address is one that no setting opens to the shells (step 1 above). */
export function isMetadataAddress(address: string): boolean {
  const family = net.isIP(address);
  return family !== 0 && metadata.check(address, family === 4 ? "ipv4" : "ipv6");
}

export function egressRuleset(table: string, plan: EgressPlan): string {
  const shells = `meta skuid ${plan.uids[0]}-${plan.uids[1]}`;
  const set = (items: readonly string[]) => `{ ${items.join(", ")} }`;
  const cidrs = (ranges: Range[]) => set(ranges.map(([network, prefix]) => `${network}/${prefix}`));
  const byFamily = (addresses: readonly string[], rule: (daddr: string) => string[]) =>
    (["ip", "ip6"] as const).flatMap((match) => {
      const of = addresses.filter((address) => net.isIP(address) === (match === "ip" ? 4 : 6));
      return of.length > 0 ? rule(`${match} daddr ${set(of)}`) : [];
    });
  const database = plan.database;
  const rules = [
    `${shells} ip daddr ${cidrs(METADATA_V4)} reject`,
    `${shells} ip6 daddr ${cidrs(METADATA_V6)} reject`,
    `${shells} tcp dport @${CLOSED_PORTS} reject with tcp reset`,
    ...(database
      ? byFamily(database.addresses, (daddr) => [`${shells} ${daddr} tcp dport ${database.port} reject with tcp reset`])
      : []),
    ...byFamily(plan.nameServers, (daddr) => [
      `${shells} ${daddr} udp dport 53 accept`,
      `${shells} ${daddr} tcp dport 53 accept`,
    ]),
    ...byFamily(plan.allowed, (daddr) => [`${shells} ${daddr} accept`]),
    `${shells} ip daddr ${cidrs(NON_PUBLIC_V4_DENIED)} reject`,
    `${shells} ip6 daddr ${cidrs(NON_PUBLIC_V6_DENIED)} reject`,
  ];
  const ports = plan.ports.length > 0 ? ` elements = ${set(plan.ports.map(String))};` : "";
  return [
    `table inet ${table} {`,
    `  set ${CLOSED_PORTS} { type inet_service;${ports} }`,
    "  chain output {",
    "    type filter hook output priority 0; policy accept;",
    ...rules.map((rule) => `    ${rule}`),
    "  }",
    "}",
    "",
  ].join("\n");
}
