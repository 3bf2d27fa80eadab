import { describe, expect, test } from 'vitest';
import { exactCount, formatCount, formatPercent, formatShare, formatUsage } from './numbers';

const p2 = (n: number) => (1n << BigInt(n)).toString();

describe('formatCount', () => {
  test.each([
    ['0', '0'],
    ['1', '1'],
    ['256', '256'],
    ['65536', '65,536'],
    ['999999999999', '999,999,999,999'],
    ['1000000000000', '1 × 10¹²'],
    [p2(40), '2⁴⁰'],
    [p2(64), '2⁶⁴'],
    [p2(80), '2⁸⁰'],
    [p2(128), '2¹²⁸'],
    ['18400000000000000000', '1.8 × 10¹⁹'],
    ['18446744073709551617', '1.8 × 10¹⁹'],
    ['1208925819614629174706177', '1.2 × 10²⁴'],
    ['9960000000000000', '1 × 10¹⁶'],
    ['9949999999999999', '9.9 × 10¹⁵'],
    ['not a number', 'not a number'],
  ])('%s → %s', (value, expected) => {
    expect(formatCount(value)).toBe(expected);
  });
});

describe('formatShare', () => {
  test.each([
    ['0', '256', '0 %'],
    ['256', '256', '100 %'],
    ['96', '256', '37.5 %'],
    ['16', '256', '6.25 %'],
    ['1', '3', '33.3 %'],
    ['2', '3', '66.6 %'],
    ['1', '10001', '< 0.01 %'],
    ['1', '10000', '0.01 %'],
    ['256', p2(80), '< 0.01 %'],
    ['18400000000000000000', p2(80), '< 0.01 %'],
    ['998', '1000', '99.8 %'],
    ['9999', '10000', '> 99.9 %'],
    ['300', '256', '117.1 %'],
    [p2(79), p2(80), '50 %'],
    ['5', '0', '—'],
  ])('%s of %s → %s', (part, whole, expected) => {
    expect(formatShare(part, whole)).toBe(expected);
  });
});

describe('formatPercent', () => {
  test.each([
    [0, '0 %'],
    [1, '100 %'],
    [0.375, '37.5 %'],
    [0.0625, '6.25 %'],
    [2e-22, '< 0.01 %'],
    [0.99999, '> 99.9 %'],
    [Number.NaN, '—'],
  ])('%s → %s', (ratio, expected) => {
    expect(formatPercent(ratio)).toBe(expected);
  });
});

test('formatUsage writes count, whole and share; exactCount groups every digit', () => {
  expect(formatUsage('18400000000000000000', p2(80))).toBe('1.8 × 10¹⁹ of 2⁸⁰ (< 0.01 %)');
  expect(formatUsage('96', '256')).toBe('96 of 256 (37.5 %)');
  expect(exactCount(p2(80))).toBe('1,208,925,819,614,629,174,706,176');
});
