import { afterEach, describe, expect, test } from 'vitest';
import { env } from '@/server/env';
import { parseTrustedProxies } from '@/lib/trusted-proxies';
import { clientAddress } from './client-address';

describe('client address', () => {
  const proxies = parseTrustedProxies('192.0.2.10, 10.0.0.0/8 2001:db8::/32');

  test.each([
    {
      case: 'no proxy configured: the peer, whatever X-Forwarded-For says',
      remote: '203.0.113.7',
      xff: '198.51.100.1',
      trusted: parseTrustedProxies(''),
      client: '203.0.113.7',
    },
    { case: 'an untrusted peer cannot choose its address', remote: '203.0.113.7', xff: '198.51.100.1', trusted: proxies, client: '203.0.113.7' },
    { case: 'a trusted proxy: the address it received from', remote: '192.0.2.10', xff: '198.51.100.1', trusted: proxies, client: '198.51.100.1' },
    { case: 'an IPv4-mapped trusted peer', remote: '::ffff:192.0.2.10', xff: '198.51.100.1', trusted: proxies, client: '198.51.100.1' },
    { case: 'a chain of trusted proxies is skipped', remote: '10.1.2.3', xff: '198.51.100.1, 10.9.9.9', trusted: proxies, client: '198.51.100.1' },
    { case: 'what the client prepended is not believed', remote: '192.0.2.10', xff: '1.2.3.4, 198.51.100.1', trusted: proxies, client: '198.51.100.1' },
    { case: 'a malformed hop stops at the last trusted one', remote: '192.0.2.10', xff: 'evil, not-an-ip', trusted: proxies, client: '192.0.2.10' },
    { case: 'a trusted proxy without the header', remote: '192.0.2.10', xff: undefined, trusted: proxies, client: '192.0.2.10' },
    { case: 'IPv6 proxies and clients', remote: '2001:db8::1', xff: '2001:db9::5', trusted: proxies, client: '2001:db9::5' },
  ])('$case', ({ remote, xff, trusted, client }) => {
    expect(clientAddress(remote, xff, trusted)).toBe(client);
  });

  test('TRUSTED_PROXIES entries that are not addresses or CIDRs are refused by name', () => {
    for (const bad of ['proxy.example.com', '10.0.0.0/33', '2001:db8::/129', '10.0.0.1/8/1', '10.0.0.0/x']) {
      expect(() => parseTrustedProxies(`192.0.2.1,${bad}`)).toThrow(`"${bad}" is not an IP address or CIDR`);
    }
  });
});

describe('TRUSTED_PROXIES in the environment', () => {
  const saved = process.env.TRUSTED_PROXIES;
  afterEach(() => {
    if (saved === undefined) delete process.env.TRUSTED_PROXIES;
    else process.env.TRUSTED_PROXIES = saved;
  });
  test('an invalid list fails the environment with the variable named', () => {
    process.env.TRUSTED_PROXIES = '10.0.0.0/8,not-a-proxy';
    expect(() => env()).toThrow(/TRUSTED_PROXIES: "not-a-proxy" is not an IP address or CIDR/);
    process.env.TRUSTED_PROXIES = '10.0.0.0/8';
    expect(env().TRUSTED_PROXIES).toBe('10.0.0.0/8');
  });
});
