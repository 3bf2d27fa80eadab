import type { BlockList } from 'node:net';
import { parseAddressList } from './address-policy';

/**
 * Parses TRUSTED_PROXIES: addresses or CIDRs separated by commas or spaces. Throws naming the entry
 * that is neither, so the environment check can report it. A shared library module: the
 * environment schema (lib/env-schema.ts) validates the variable with it, and the web process's
 * front door believes `X-Forwarded-*` from the list it returns.
 */
export function parseTrustedProxies(list: string): BlockList {
  return parseAddressList(list);
}
