import { BlockList, isIP } from 'node:net';

/**
 * Parses TRUSTED_PROXIES: addresses or CIDRs separated by commas or spaces. Throws naming the entry
 * that is neither, so the environment check can report it. A shared library module: the
 * environment schema (lib/env-schema.ts) validates the variable with it, and the web process's
 * front door believes `X-Forwarded-*` from the list it returns.
 */
export function parseTrustedProxies(list: string): BlockList {
  const trusted = new BlockList();
  for (const entry of list.split(/[\s,]+/).filter(Boolean)) {
    const [address, prefix, extra] = entry.split('/');
    const family = isIP(address);
    const max = family === 4 ? 32 : 128;
    if (!family || extra !== undefined || (prefix !== undefined && !(/^\d+$/.test(prefix) && Number(prefix) <= max))) {
      throw new Error(`"${entry}" is not an IP address or CIDR`);
    }
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) trusted.addAddress(address, type);
    else trusted.addSubnet(address, Number(prefix), type);
  }
  return trusted;
}
