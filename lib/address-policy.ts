import { BlockList, isIP } from 'node:net';

/**
 * Which IP addresses an outbound request on a tenant's behalf (an alert webhook) may reach: public
 * unicast addresses, plus whatever the operator allows explicitly (WEBHOOK_ALLOWED_CIDRS). Everything
 * in the IANA IPv4 and IPv6 Special-Purpose Address Registries that is not globally reachable is
 * refused, and so are the IPv6 forms that embed an IPv4 address (mapped, translated, 6to4), which
 * would otherwise let `[::ffff:7f00:1]` or `[64:ff9b::a9fe:a9fe]` reach a refused IPv4 target.
 *
 * A shared library module (node:net only): the webhook code checks a URL's literal host at
 * registration and every address a name resolves to at delivery with it.
 */

interface Range {
  cidr: string;
  reason: string;
}

const V4: Range[] = [
  { cidr: '0.0.0.0/8', reason: 'unspecified ("this network")' },
  { cidr: '10.0.0.0/8', reason: 'private (RFC 1918)' },
  { cidr: '100.64.0.0/10', reason: 'shared address space (CGNAT, RFC 6598)' },
  { cidr: '127.0.0.0/8', reason: 'loopback' },
  { cidr: '169.254.0.0/16', reason: 'link-local' },
  { cidr: '172.16.0.0/12', reason: 'private (RFC 1918)' },
  { cidr: '192.0.0.0/24', reason: 'IETF protocol assignments' },
  { cidr: '192.0.2.0/24', reason: 'documentation' },
  { cidr: '192.88.99.0/24', reason: '6to4 relay anycast' },
  { cidr: '192.168.0.0/16', reason: 'private (RFC 1918)' },
  { cidr: '198.18.0.0/15', reason: 'benchmarking' },
  { cidr: '198.51.100.0/24', reason: 'documentation' },
  { cidr: '203.0.113.0/24', reason: 'documentation' },
  { cidr: '224.0.0.0/4', reason: 'multicast' },
  { cidr: '240.0.0.0/4', reason: 'reserved (and the broadcast address)' },
];

const V6: Range[] = [
  { cidr: '::/128', reason: 'unspecified' },
  { cidr: '::1/128', reason: 'loopback' },
  { cidr: '::ffff:0:0/96', reason: 'IPv4-mapped' },
  { cidr: '::/96', reason: 'IPv4-compatible (deprecated)' },
  { cidr: '::ffff:0:0:0/96', reason: 'IPv4-translated' },
  { cidr: '64:ff9b::/96', reason: 'IPv4/IPv6 translation (NAT64)' },
  { cidr: '64:ff9b:1::/48', reason: 'IPv4/IPv6 translation (local NAT64)' },
  { cidr: '100::/64', reason: 'discard-only' },
  { cidr: '2001::/23', reason: 'IETF protocol assignments (Teredo, benchmarking, ORCHID)' },
  { cidr: '2001:db8::/32', reason: 'documentation' },
  { cidr: '2002::/16', reason: '6to4 (embeds an IPv4 address)' },
  { cidr: '3fff::/20', reason: 'documentation' },
  { cidr: '5f00::/16', reason: 'segment routing (SRv6)' },
  { cidr: 'fc00::/7', reason: 'unique local (private, RFC 4193)' },
  { cidr: 'fe80::/10', reason: 'link-local' },
  { cidr: 'fec0::/10', reason: 'site-local (deprecated)' },
  { cidr: 'ff00::/8', reason: 'multicast' },
];

/**
 * One BlockList per range, so a refusal can say which range it hit. IPv4 addresses are checked
 * against the IPv4 ranges only and IPv6 ones against the IPv6 ranges only: Node's BlockList matches
 * an IPv4 address against `::ffff:0:0/96` (and a mapped one against IPv4 rules).
 */
const compile = (ranges: Range[], type: 'ipv4' | 'ipv6') =>
  ranges.map(({ cidr, reason }) => {
    const [network, prefix] = cidr.split('/');
    const list = new BlockList();
    list.addSubnet(network, Number(prefix), type);
    return { cidr, reason, list };
  });
const compiledV4 = compile(V4, 'ipv4');
const compiledV6 = compile(V6, 'ipv6');

/** Why `address` is not a public unicast address (e.g. `loopback`), or null when it is one. */
export function nonPublicReason(address: string): string | null {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const range of family === 4 ? compiledV4 : compiledV6) {
    if (range.list.check(address, type)) return `${range.reason}, ${range.cidr}`;
  }
  return null;
}

/**
 * Addresses or CIDRs separated by commas or spaces, as a BlockList. Throws naming the entry that
 * is neither, so the environment check can report it (TRUSTED_PROXIES, WEBHOOK_ALLOWED_CIDRS).
 */
export function parseAddressList(list: string): BlockList {
  const parsed = new BlockList();
  for (const entry of list.split(/[\s,]+/).filter(Boolean)) {
    const [address, prefix, extra] = entry.split('/');
    const family = isIP(address);
    const max = family === 4 ? 32 : 128;
    if (!family || extra !== undefined || (prefix !== undefined && !(/^\d+$/.test(prefix) && Number(prefix) <= max))) {
      throw new Error(`"${entry}" is not an IP address or CIDR`);
    }
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) parsed.addAddress(address, type);
    else parsed.addSubnet(address, Number(prefix), type);
  }
  return parsed;
}

/** What the policy says about one address: allowed as public, allowed by the operator's list, or refused and why. */
export type AddressVerdict = { allowed: true; listed: boolean } | { allowed: false; reason: string };

/**
 * The verdict on one address: the operator's allow list first (it may open loopback or private
 * ranges on purpose, e.g. an in-cluster receiver), then the public-address rule. Anything that is
 * not an IP address in its canonical form (a resolver's `2130706433`) is refused.
 */
export function checkAddress(address: string, allowList: BlockList | null): AddressVerdict {
  const family = isIP(address);
  if (family === 0) return { allowed: false, reason: 'not an IP address' };
  if (allowList?.check(address, family === 4 ? 'ipv4' : 'ipv6')) return { allowed: true, listed: true };
  const reason = nonPublicReason(address);
  return reason === null ? { allowed: true, listed: false } : { allowed: false, reason };
}
