import { describe, expect, test } from 'vitest';
import { authRequest } from './public-request';

/** A request as Next hands it to the auth route: its URL on the bound address, the browser's Host header. */
const incoming = (url: string, host: string, init: RequestInit = {}) => new Request(url, { ...init, headers: { host, 'user-agent': 'test' } });

describe('the request next-auth builds its redirect URLs from', () => {
  test.each([
    // A loopback address stays as the browser wrote it (a NextRequest would write localhost).
    ['http://localhost:3391/api/auth/signin/oidc', '127.0.0.1:3391', 'http://127.0.0.1:3391/api/auth/signin/oidc'],
    ['http://localhost:3391/api/auth/signin/oidc', '127.0.0.2:3391', 'http://127.0.0.2:3391/api/auth/signin/oidc'],
    ['http://localhost:3391/api/auth/callback/oidc?code=x', '[::1]:3391', 'http://[::1]:3391/api/auth/callback/oidc?code=x'],
    ['http://0.0.0.0:3000/api/auth/signout', 'localhost:3000', 'http://localhost:3000/api/auth/signout'],
    ['http://0.0.0.0:3000/api/auth/signout', 'meridian.example.com', 'http://meridian.example.com/api/auth/signout'],
  ])('%s with Host %s → %s', (url, host, expected) => {
    expect(authRequest(incoming(url, host), undefined).url).toBe(expected);
  });

  test('with AUTH_URL, its origin (a NextRequest, which next-auth re-bases on AUTH_URL itself)', () => {
    const req = authRequest(incoming('http://0.0.0.0:3000/api/auth/session', 'internal:3000'), 'https://console.example.com/');
    expect(req.url).toBe('https://console.example.com/api/auth/session');
    expect(req.nextUrl.origin).toBe('https://console.example.com');
  });

  test('method, headers and a body already read are kept', async () => {
    const req = authRequest(incoming('http://0.0.0.0:3000/api/auth/callback/credentials', '127.0.0.1:3000', { method: 'POST' }), undefined, Buffer.from('a=1'));
    expect(req.method).toBe('POST');
    expect(req.headers.get('user-agent')).toBe('test');
    expect(await req.text()).toBe('a=1');
  });
});
