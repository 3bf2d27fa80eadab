import { describe, expect, test } from 'vitest';
import { atOrigin, publicOrigin } from './public-origin';

describe('the public origin of sign-in redirects', () => {
  test.each([
    // Next's URL carries the bound address; the browser asked for a host.
    ['http://0.0.0.0:3000/api/auth/signout', 'localhost:3000', undefined, 'http://localhost:3000'],
    ['http://0.0.0.0:3000/api/auth/signout', 'meridian.example.com', undefined, 'http://meridian.example.com'],
    ['https://0.0.0.0:3000/api/auth/signout', 'meridian.example.com', undefined, 'https://meridian.example.com'],
    ['http://0.0.0.0:3000/x', '[2001:db8::1]:3000', undefined, 'http://[2001:db8::1]:3000'],
    // AUTH_URL wins (a proxy that rewrites Host).
    ['http://0.0.0.0:3000/x', 'internal:3000', 'https://console.example.com/', 'https://console.example.com'],
    // A Host that is not a host is not believed.
    ['http://0.0.0.0:3000/x', 'evil.example/path', undefined, 'http://0.0.0.0:3000'],
    ['http://0.0.0.0:3000/x', 'user@evil.example', undefined, 'http://0.0.0.0:3000'],
    ['http://0.0.0.0:3000/x', null, undefined, 'http://0.0.0.0:3000'],
  ])('%s with Host %s and AUTH_URL %s → %s', (url, host, authUrl, expected) => {
    expect(publicOrigin(url, host, authUrl)).toBe(expected);
  });

  test('a URL moved to another origin keeps its path and query', () => {
    expect(atOrigin('http://0.0.0.0:3000/api/auth/callback/credentials?x=1', 'http://localhost:3000')).toBe(
      'http://localhost:3000/api/auth/callback/credentials?x=1',
    );
  });
});
