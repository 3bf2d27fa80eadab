import { describe, expect, test } from 'vitest';
import { describeUserAgent } from './user-agent';

describe('describeUserAgent', () => {
  test.each([
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.85 Safari/537.36', 'Chrome 131 on Linux'],
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/140.0.0.0 Safari/537.36', 'Headless Chrome 140 on Linux'],
    [
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Edg/120.0.2210.91',
      'Edge 120 on Windows',
    ],
    ['Mozilla/5.0 (Macintosh; Intel Mac OS X 14.2; rv:121.0) Gecko/20100101 Firefox/121.0', 'Firefox 121 on macOS'],
    [
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Mobile/15E148 Safari/604.1',
      'Safari 17 on iOS',
    ],
    ['Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.144 Mobile Safari/537.36', 'Chrome 120 on Android'],
    ['curl/8.5.0', 'curl 8'],
    ['', 'Unknown browser'],
    [null, 'Unknown browser'],
    ['some-agent/1 with a rather long description that goes on', 'some-agent/1 with a rather long descript…'],
  ])('%s', (ua, words) => expect(describeUserAgent(ua)).toBe(words));
});
