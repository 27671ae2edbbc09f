import { BlockList, isIP } from 'node:net';

/**
 * IPv4 networks a Client ID Metadata Document may not be fetched from: private, loopback,
 * link-local, unspecified, and the other ranges that never lead to a public web server (shared NAT
 * space, documentation, benchmarking, multicast, reserved).
 */
const BLOCKED_V4: readonly [string, number][] = [
  ['0.0.0.0', 8], // "this network" (0.0.0.0 itself reaches this machine)
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata services live here)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
];

const BLOCKED_V6: readonly [string, number][] = [
  ['::', 96], // unspecified, loopback, and the deprecated IPv4-compatible addresses
  ['::ffff:0:0:0', 96], // IPv4-translated (SIIT)
  ['100::', 64], // discard
  ['2001::', 32], // Teredo (its embedded addresses are obfuscated)
  ['2001:db8::', 32], // documentation
  ['64:ff9b:1::', 48], // local-use NAT64
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];

/** The two 16-bit words of an IPv4 address, in hex: `10.0.0.1` → `a00:1`. */
function hexWords(v4: string): string {
  const [a, b, c, d] = v4.split('.').map(Number);
  return `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

/**
 * One list for both families. Node's BlockList judges an IPv4-mapped address (`::ffff:7f00:1`) by the
 * IPv4 rules itself; the IPv6 forms that carry an IPv4 address elsewhere (NAT64 `64:ff9b::/96`, 6to4
 * `2002::/16`) get each blocked IPv4 network at their place.
 */
const BLOCKED = new BlockList();
for (const [network, prefix] of BLOCKED_V4) {
  BLOCKED.addSubnet(network, prefix, 'ipv4');
  BLOCKED.addSubnet(`64:ff9b::${hexWords(network)}`, 96 + prefix, 'ipv6');
  BLOCKED.addSubnet(`2002:${hexWords(network)}::`, 16 + prefix, 'ipv6');
}
for (const [network, prefix] of BLOCKED_V6) BLOCKED.addSubnet(network, prefix, 'ipv6');

/**
 * Whether a server at `address` (an address as `dns.lookup` answers it, or a URL's IP-literal host,
 * brackets allowed) may be fetched: a public unicast address. Anything that is not an address is not.
 */
export function isPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').split('%')[0];
  const family = isIP(bare);
  if (family === 0) return false;
  return !BLOCKED.check(bare, family === 4 ? 'ipv4' : 'ipv6');
}
